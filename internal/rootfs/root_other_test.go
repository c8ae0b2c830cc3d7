//go:build unix && !linux

package rootfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// setDefaultACL fails: POSIX default ACLs as xattrs are Linux's.
func setDefaultACL(dir string, acl []byte) error { return errors.ErrUnsupported }

// exchange answers ENOSYS: RENAME_EXCHANGE is Linux's (the race test
// skips).
func exchange(a, b string) error { return unix.ENOSYS }
