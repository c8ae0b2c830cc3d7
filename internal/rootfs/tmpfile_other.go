//go:build unix && !linux

package rootfs

import "golang.org/x/sys/unix"

// openUnnamed answers EOPNOTSUPP: O_TMPFILE is Linux's, so CreateNew
// fails and the files stage takes the named temporary file's way.
func openUnnamed(dirfd int, perm uint32) (int, error) { return -1, unix.EOPNOTSUPP }

// linkNew is never reached: openUnnamed made no file to link.
func (t *Temp) linkNew() error { return unix.EOPNOTSUPP }
