//go:build !linux

package vbox

// Open fails: the vboxguest ioctls are Linux's.
func Open(path string) (Device, error) {
	return nil, ErrUnsupported
}
