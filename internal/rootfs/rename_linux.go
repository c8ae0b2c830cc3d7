package rootfs

import "golang.org/x/sys/unix"

// renameNoReplace renames old to new in dirfd unless new exists
// (renameat2(2) with RENAME_NOREPLACE): EEXIST then, EINVAL where the
// filesystem cannot do it.
func renameNoReplace(dirfd int, old, new string) error {
	return unix.Renameat2(dirfd, old, dirfd, new, unix.RENAME_NOREPLACE)
}
