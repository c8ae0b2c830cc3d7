package rootfs

import "golang.org/x/sys/unix"

// mountOf identifies the mount the node name in dirfd lies on (name ""
// means dirfd itself), never following a symlink or triggering an
// automount: the mount id statx(2) gives since Linux 5.8, which also tells
// a bind mount of the same filesystem apart, else the device number.
func mountOf(dirfd int, name string) (mountKey, error) {
	flags := unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var st unix.Statx_t
	if err := unix.Statx(dirfd, name, flags, unix.STATX_TYPE|unix.STATX_MNT_ID, &st); err != nil {
		return mountKey{}, err
	}
	k := mountKey{dev: uint64(unix.Mkdev(st.Dev_major, st.Dev_minor)), dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
	if st.Mask&unix.STATX_MNT_ID != 0 {
		k.id, k.hasID = st.Mnt_id, true
	}
	return k, nil
}
