//go:build !(linux && amd64)

package platform

import "fmt"

// openVMwareRPC: the backdoor is an x86 I/O port; flint implements it for
// linux/amd64 only, like Ignition.
func openVMwareRPC() (guestRPC, error) {
	return nil, fmt.Errorf("the VMware backdoor needs linux/amd64: %w", ErrNoProvider)
}
