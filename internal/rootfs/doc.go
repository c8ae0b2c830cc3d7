// Package rootfs is the one way flint touches the target root: every path
// the files stage (and the unit writer through it) writes, links, chmods or
// chowns goes through a Root, which treats its directory as / for every
// symlink it meets (as JoinPath in coreos/ignition
// internal/exec/util/util.go does), so nothing is ever changed outside the
// root however the target's symlinks point.
//
// How: a path is walked one component at a time with openat(2) on
// directory file descriptors, each component opened with O_NOFOLLOW. A
// component that is a symlink is read with readlinkat(2) and its target
// spliced into the walk: an absolute target restarts at the root's
// descriptor, ".." never climbs above it, and at most MaxSymlinks links are
// followed (ELOOP beyond, like the kernel's limit). The final component is
// never followed for writes, links, chmod or chown: it is operated on
// relative to its parent's descriptor (renameat, symlinkat, linkat,
// fchownat and fchmodat2 with AT_SYMLINK_NOFOLLOW, or, on kernels
// before 6.6, fchmod on a descriptor opened with O_NOFOLLOW).
//
// Why descriptors and not resolve-then-operate on strings: once a parent
// is open, a symlink swapped in later (by the config's own links, written
// in the same run) cannot redirect the operation, because the kernel never
// resolves the parent's path again. Why not openat2(RESOLVE_IN_ROOT): it
// needs Linux 5.6, gives no real path for the "two entries resolve to the
// same path" check, and the walk here costs one openat per component,
// which is cheap next to the writes themselves.
//
// Family: target-side libraries (internal/README.md).
package rootfs
