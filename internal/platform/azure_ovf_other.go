//go:build !linux

package platform

import "errors"

// cdromDriveStatus needs the Linux CD-ROM ioctl.
func cdromDriveStatus(dev string) (cdromStatus, error) {
	return 0, errors.New("CD-ROM drive status needs Linux")
}
