package rootfs

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new regular file with no name in the directory dirfd
// (open(2), O_TMPFILE), for reading and writing: CommitNewOrSame reads it
// back to compare. A variable: tests take O_TMPFILE away.
var openUnnamed = func(dirfd int, perm uint32) (int, error) {
	return unix.Openat(dirfd, ".", unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, perm)
}

// linkNew gives a CreateNew file its name; EEXIST when something is
// there. linkat(2) of a descriptor (AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH
// (flint has it as root); without it, its /proc/self/fd link is followed.
func (t *Temp) linkNew() error {
	err := unix.Linkat(t.fd, "", t.dir.parent, t.dir.base, unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOENT) {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(t.fd), t.dir.parent, t.dir.base, unix.AT_SYMLINK_FOLLOW)
	}
	return err
}
