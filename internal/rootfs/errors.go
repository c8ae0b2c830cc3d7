package rootfs

import "errors"

// ErrTooManyLinks means resolving a path met more than MaxSymlinks
// symlinks (a loop, most likely).
var ErrTooManyLinks = errors.New("too many levels of symbolic links")

// ErrNotDir means a component in the middle of a path exists and is
// neither a directory nor a symlink to one.
var ErrNotDir = errors.New("not a directory")

// ErrNotRelative means a path given to a Root is not absolute (paths are
// always absolute inside the target root).
var ErrNotRelative = errors.New("path is not absolute")

// ErrMountPoint means a removal would cross into another mounted
// filesystem (or a bind mount): its contents are not the tree's to delete,
// and the kernel would refuse the mount point itself (EBUSY) after
// everything in it was gone.
var ErrMountPoint = errors.New("another filesystem is mounted there; flint never removes across a mount point")
