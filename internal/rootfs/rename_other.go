//go:build unix && !linux

package rootfs

import "golang.org/x/sys/unix"

// renameNoReplace answers ENOSYS: renameat2(2) is Linux's, so Commit's
// check-then-rename fallback does the job (nothing else writes the target
// root meanwhile).
func renameNoReplace(dirfd int, old, new string) error { return unix.ENOSYS }
