//go:build !linux

package sys

import (
	"errors"
	"fmt"
)

// Mounter is a stand-in off Linux: flint provisions only Linux machines, but
// its workstation commands build everywhere.
type Mounter struct{}

// Mount always fails off Linux with errors.ErrUnsupported.
func (Mounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	return fmt.Errorf("mount %s on %s: %w", source, target, errors.ErrUnsupported)
}

// Unmount always fails off Linux with errors.ErrUnsupported.
func (Mounter) Unmount(target string) error {
	return fmt.Errorf("unmount %s: %w", target, errors.ErrUnsupported)
}
