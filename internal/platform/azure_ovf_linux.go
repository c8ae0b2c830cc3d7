//go:build linux

package platform

import (
	"fmt"
	"os"
	"syscall"
)

// From <linux/cdrom.h>: the ioctl, and the slot argument that means "the
// disc in the drive now" (drives without a changer ignore the slot).
const (
	cdromDriveStatusIoctl = 0x5326
	cdslCurrent           = 0x7fffffff
)

// cdromDriveStatus asks the drive at dev for its status. The device is
// opened with O_NONBLOCK, as cdrom(4) asks: a blocking open of a drive with
// no disc fails with ENOMEDIUM instead of answering.
func cdromDriveStatus(dev string) (cdromStatus, error) {
	f, err := os.OpenFile(dev, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dev, err)
	}
	var (
		status uintptr
		errno  syscall.Errno
	)
	if err := rc.Control(func(fd uintptr) {
		status, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, cdromDriveStatusIoctl, cdslCurrent)
	}); err != nil {
		return 0, fmt.Errorf("%s: %w", dev, err)
	}
	if errno != 0 {
		return 0, fmt.Errorf("CDROM_DRIVE_STATUS on %s: %w", dev, errno)
	}
	return cdromStatus(status), nil
}
