package sys

import (
	"fmt"
	"syscall"
)

// Mounter mounts and unmounts with mount(2) and umount2(2).
type Mounter struct{}

// Mount calls mount(2). flags are MS_* flags (syscall.MS_RDONLY for a
// config drive); fstype must be a real filesystem type, since the kernel
// has no "auto".
func (Mounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	if err := syscall.Mount(source, target, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s (%s) on %s: %w", source, fstype, target, err)
	}
	return nil
}

// Unmount calls umount2(2) without flags.
func (Mounter) Unmount(target string) error {
	if err := syscall.Unmount(target, 0); err != nil {
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	return nil
}
