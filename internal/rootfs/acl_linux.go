package rootfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// mayHaveDefaultACL says the directory dirfd may have a default POSIX ACL
// (the system.posix_acl_default attribute, acl(5)), which replaces the
// umask for the files created in it: only its certain absence says no.
func mayHaveDefaultACL(dirfd int) bool {
	_, err := unix.Fgetxattr(dirfd, "system.posix_acl_default", nil)
	return !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.EOPNOTSUPP)
}
