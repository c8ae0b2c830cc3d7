package files

import "errors"

// ErrExists means a node exists where the config puts one, and the config
// does not allow overwriting it (overwrite false), or it is of another
// kind.
var ErrExists = errors.New("exists and overwrite is false")

// ErrSamePath means two entries of the config resolve to the same real
// path once symlinks are followed.
var ErrSamePath = errors.New("resolves to the same path as another entry")

// ErrLinkMismatch means an existing link differs from the one the config
// asks for (another target, or a hard link to another inode).
var ErrLinkMismatch = errors.New("existing link does not match")

// ErrUnsafeHome means a user's ~/.ssh path goes through a symlink, which
// would let the user's home redirect a write done as root.
var ErrUnsafeHome = errors.New("path under the home directory is a symlink")

// ErrIDRange means a user or group id in the config is outside
// 0…config.MaxID: the kernel keeps 32 bits, so it would be truncated
// (4294967296 becoming root's 0).
var ErrIDRange = errors.New("is out of range for a user or group id")
