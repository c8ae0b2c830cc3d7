//go:build unix && !linux

package rootfs

import "golang.org/x/sys/unix"

// mountOf identifies the mount the node name in dirfd lies on (name ""
// means dirfd itself) by its device number: without statx(2) a bind mount
// of the same filesystem looks like its parent.
func mountOf(dirfd int, name string) (mountKey, error) {
	var st unix.Stat_t
	var err error
	if name == "" {
		err = unix.Fstat(dirfd, &st)
	} else {
		err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return mountKey{}, err
	}
	return mountKey{dev: uint64(st.Dev), dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}, nil
}
