//go:build unix && !linux

package rootfs

import "golang.org/x/sys/unix"

// openUnnamed answers EOPNOTSUPP: O_TMPFILE is Linux's, so CreateNew
// makes a named temporary file.
var openUnnamed = func(dirfd int, perm uint32) (int, error) { return -1, unix.EOPNOTSUPP }

// linkNew is never reached: openUnnamed made no file to link.
func (t *Temp) linkNew() error { return unix.EOPNOTSUPP }
