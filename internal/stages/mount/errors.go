package mount

import "errors"

// ErrSymlink means a component of a mountpoint is a symlink: mounting
// through it could land outside the target root.
var ErrSymlink = errors.New("is a symlink; mountpoints must be real directories")

// ErrNotDirectory means a component of a mountpoint exists and is not a
// directory.
var ErrNotDirectory = errors.New("is not a directory")
