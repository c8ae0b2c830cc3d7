package engine

import "syscall"

// stampMountFlags are the stamp filesystem's mount flags: nothing on it
// is run or opened as a device, and it is read-only unless the stamp is
// written.
func stampMountFlags(readWrite bool) uintptr {
	flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC)
	if !readWrite {
		flags |= syscall.MS_RDONLY
	}
	return flags
}
