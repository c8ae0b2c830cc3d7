//go:build !unix

package rootfs

import (
	"errors"
	"io/fs"
	"os"
)

// errUnsupported is every operation's error where there are no directory
// descriptors to confine writes with: writing a target root is a Linux
// job; the rest of flint (flint validate) builds anywhere.
var errUnsupported = errors.ErrUnsupported

// MaxSymlinks bounds the symlinks one resolution follows.
const MaxSymlinks = 40

// Root is unavailable on this system.
type Root struct{}

// Open fails: see errUnsupported.
func Open(dir string) (*Root, error) { return nil, errUnsupported }

// Close is unsupported on this system (see root.go).
func (r *Root) Close() error { return errUnsupported }

// Dir is unsupported on this system (see root.go).
func (r *Root) Dir() string { return "" }

// HostPath is unsupported on this system (see root.go).
func (r *Root) HostPath(real string) string { return real }

// Forget is unsupported on this system (see root.go).
func (r *Root) Forget() {}

// Sync is unsupported on this system (see root.go).
func (r *Root) Sync() error { return errUnsupported }

// Resolve is unsupported on this system (see root.go).
func (r *Root) Resolve(p string) (string, error) { return "", errUnsupported }

// Lstat is unsupported on this system (see root.go).
func (r *Root) Lstat(p string) (Info, error) { return Info{}, errUnsupported }

// MkdirAll is unsupported on this system (see root.go).
func (r *Root) MkdirAll(p string, mode fs.FileMode) (bool, error) { return false, errUnsupported }

// CreateTemp is unsupported on this system (see root.go).
func (r *Root) CreateTemp(p string) (*Temp, error) { return nil, errUnsupported }

// WriteFile is unsupported on this system (see root.go).
func (r *Root) WriteFile(p string, data []byte, mode os.FileMode) error { return errUnsupported }

// AppendFile is unsupported on this system (see root.go).
func (r *Root) AppendFile(p string, data []byte, mode os.FileMode) error { return errUnsupported }

// OpenAppend is unsupported on this system (see root.go).
func (r *Root) OpenAppend(p string, mode os.FileMode) (*os.File, error) { return nil, errUnsupported }

// ReadFile is unsupported on this system (see root.go).
func (r *Root) ReadFile(p string) ([]byte, error) { return nil, errUnsupported }

// Remove is unsupported on this system (see root.go).
func (r *Root) Remove(p string) error { return errUnsupported }

// RemoveAll is unsupported on this system (see root.go).
func (r *Root) RemoveAll(p string) error { return errUnsupported }

// Symlink is unsupported on this system (see root.go).
func (r *Root) Symlink(target, p string) error { return errUnsupported }

// Readlink is unsupported on this system (see root.go).
func (r *Root) Readlink(p string) (string, error) { return "", errUnsupported }

// Link is unsupported on this system (see root.go).
func (r *Root) Link(target, p string) error { return errUnsupported }

// Lchown is unsupported on this system (see root.go).
func (r *Root) Lchown(p string, uid, gid int) error { return errUnsupported }

// Chmod is unsupported on this system (see root.go).
func (r *Root) Chmod(p string, mode fs.FileMode) error { return errUnsupported }

// Locate is unsupported on this system (see root.go).
func (r *Root) Locate(p string) (*Loc, error) { return nil, errUnsupported }

// Temp is unavailable on this system.
type Temp struct{ Real string }

// Write is unsupported on this system (see root.go).
func (t *Temp) Write(b []byte) (int, error) { return 0, errUnsupported }

// Commit is unsupported on this system (see root.go).
func (t *Temp) Commit(mode fs.FileMode, uid, gid int) error { return errUnsupported }

// Abort is unsupported on this system (see root.go).
func (t *Temp) Abort() {}

// Sync is unsupported on this system (see root.go).
func (t *Temp) Sync() error { return errUnsupported }

// Sum256 is unsupported on this system (see root.go).
func (t *Temp) Sum256() ([32]byte, error) { return [32]byte{}, errUnsupported }

// CommitNewOrSame is unsupported on this system (see root.go).
func (t *Temp) CommitNewOrSame(mode fs.FileMode, uid, gid int) (bool, error) {
	return false, errUnsupported
}

// Offset is unsupported on this system (see root.go).
func (t *Temp) Offset() (int64, error) { return 0, errUnsupported }

// Rewind is unsupported on this system (see root.go).
func (t *Temp) Rewind(off int64) error { return errUnsupported }

// ID is unsupported on this system (see root.go).
func (t *Temp) ID() (FileID, error) { return FileID{}, errUnsupported }

// RemoveStaleTemps is unsupported on this system (see root.go).
func (r *Root) RemoveStaleTemps(dir string, bases []string) ([]string, error) {
	return nil, errUnsupported
}

// Loc is unavailable on this system.
type Loc struct{}

// Real is unsupported on this system (see root.go).
func (l *Loc) Real() string { return "" }

// Close is unsupported on this system (see root.go).
func (l *Loc) Close() {}

// Lstat is unsupported on this system (see root.go).
func (l *Loc) Lstat() (Info, bool, error) { return Info{}, false, errUnsupported }

// CreateNew is unsupported on this system (see root.go).
func (l *Loc) CreateNew(mode fs.FileMode, uid, gid int) (*Temp, error) { return nil, errUnsupported }

// Direct is false on this system (see root.go).
func (t *Temp) Direct() bool { return false }

// Final is unsupported on this system (see root.go).
func (t *Temp) Final() (Info, [32]byte, bool) { return Info{}, [32]byte{}, false }

// Keep does nothing on this system (see root.go).
func (t *Temp) Keep() {}

// CreateTemp is unsupported on this system (see root.go).
func (l *Loc) CreateTemp(mode fs.FileMode, uid, gid int) (*Temp, error) {
	return nil, errUnsupported
}
