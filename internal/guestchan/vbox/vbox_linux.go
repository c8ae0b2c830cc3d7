//go:build linux

package vbox

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// device is the vboxguest character device.
type device struct {
	f *os.File
}

// Open opens /dev/vboxguest. The HGCM messages are built with the
// 64-bit parameter layout (VBG_IOCTL_HGCM_CALL_64), so a 32-bit flint
// refuses.
func Open(path string) (Device, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, ErrUnsupported
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &device{f: f}, nil
}

// Ioctl performs request req on the device.
func (d *device) Ioctl(req uint32, msg []byte) error {
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	var errno unix.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, uintptr(req), uintptr(unsafe.Pointer(&msg[0])))
	}); err != nil {
		return err
	}
	runtime.KeepAlive(msg)
	if errno != 0 {
		return fmt.Errorf("ioctl %#x on %s: %w", req, d.f.Name(), errno)
	}
	return nil
}

// Addr is the user-space address of buf, which the driver copies from and
// to (a linear address parameter). The caller keeps buf referenced across
// the ioctl; Go's heap does not move objects, and buf is on the heap
// because it escapes through the Device interface.
func (d *device) Addr(buf []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
}

// Close closes the device.
func (d *device) Close() error { return d.f.Close() }
