//go:build !(linux && amd64)

package vmware

import "fmt"

// Open fails: the backdoor is an x86 I/O port; flint implements it for
// linux/amd64 only, like Ignition.
func Open() (RPC, error) {
	return nil, fmt.Errorf("the VMware backdoor needs linux/amd64: %w", ErrUnreachable)
}
