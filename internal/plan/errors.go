package plan

import "errors"

// ErrUnknownDevice means a -disk names a device the config does not name.
var ErrUnknownDevice = errors.New("the config names no such disk, filesystem device or LUKS device")

// ErrNotADisk means a -disk target is neither a block device nor a regular
// file (a disk image).
var ErrNotADisk = errors.New("neither a block device nor a disk image file")
