package rootfs

import "io/fs"

// Info is what Lstat tells of a node.
type Info struct {
	Mode     fs.FileMode
	UID, GID int
	Dev, Ino uint64
	// Nlink is the number of hard links to the node.
	Nlink uint64
	Size  int64
	// Ctime is the node's status change time in nanoseconds: any write,
	// chmod, chown, link or rename of it moves it, so an Info equal to
	// one taken earlier says nothing changed the node since (but for a
	// change within the filesystem's clock tick).
	Ctime int64
}

// IsDir says the node is a directory.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// ModeFromUnix turns the config's numeric mode (at most 07777, per
// coreos/ignition docs/configuration-v3_6.md) into a FileMode, setuid,
// setgid and sticky included.
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

// ModeToUnix is the inverse of ModeFromUnix: the permission bits with
// setuid, setgid and sticky as 04000, 02000 and 01000.
func ModeToUnix(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// FileID identifies a file on the host: after Commit the target is the
// temporary file, so a run after a crash can tell whether the rename
// happened.
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// ID is the FileID of the node Info describes.
func (i Info) ID() FileID { return FileID{Dev: i.Dev, Ino: i.Ino} }
