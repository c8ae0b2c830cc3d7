//go:build !linux

package platform

import "fmt"

// openKVPChannel: /dev/vmbus/hv_kvp is Linux's hv_utils driver.
func openKVPChannel(path string) (kvpChannel, error) {
	return nil, fmt.Errorf("the Hyper-V KVP channel needs Linux: %w", ErrNoProvider)
}
