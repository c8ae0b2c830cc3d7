package rootfs

import "golang.org/x/sys/unix"

// Sync flushes the root's filesystem (syncfs(2)): the stage writes
// thousands of files without an fsync each, and makes them durable once
// before the umount stage.
func (r *Root) Sync() error { return unix.Syncfs(r.fd) }
