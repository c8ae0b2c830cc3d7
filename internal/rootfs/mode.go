package rootfs

import "io/fs"

// Info is what Lstat tells of a node.
type Info struct {
	Mode     fs.FileMode
	UID, GID int
	Dev, Ino uint64
	Size     int64
}

// IsDir says the node is a directory.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// ModeFromUnix turns the config's numeric mode (07777, ignition.md §1.2)
// into a FileMode, setuid, setgid and sticky included.
func ModeFromUnix(m int) fs.FileMode {
	fm := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		fm |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= fs.ModeSticky
	}
	return fm
}
