//go:build unix && !linux

package rootfs

import "golang.org/x/sys/unix"

// Sync flushes every filesystem (sync(2)): other systems have no syncfs.
func (r *Root) Sync() error { unix.Sync(); return nil }
