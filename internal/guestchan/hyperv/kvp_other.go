//go:build !linux

package hyperv

import "fmt"

// Open fails: /dev/vmbus/hv_kvp is Linux's hv_utils driver.
func Open(path string) (Channel, error) {
	return nil, fmt.Errorf("%s: %w", path, ErrUnsupported)
}
