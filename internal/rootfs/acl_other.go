//go:build unix && !linux

package rootfs

// mayHaveDefaultACL says yes: other systems' ACLs are not read here, so a
// created file's mode is never taken for granted (Commit sets it).
func mayHaveDefaultACL(dirfd int) bool { return true }
