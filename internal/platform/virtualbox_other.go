//go:build !linux

package platform

// openVBoxGuest: the vboxguest ioctls are Linux's.
func openVBoxGuest(path string) (vboxDevice, error) {
	return nil, errVBoxUnsupported
}
