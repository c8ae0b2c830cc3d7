//go:build linux

package platform

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vboxGuestDevice is the vboxguest character device.
type vboxGuestDevice struct {
	f *os.File
}

// openVBoxGuest opens /dev/vboxguest. The HGCM messages are built with the
// 64-bit parameter layout (VBG_IOCTL_HGCM_CALL_64), so a 32-bit flint
// refuses.
func openVBoxGuest(path string) (vboxDevice, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, errVBoxUnsupported
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &vboxGuestDevice{f: f}, nil
}

func (d *vboxGuestDevice) ioctl(req uint32, msg []byte) error {
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

// addr is the user-space address of buf, which the driver copies from and
// to (a linear address parameter). The caller keeps buf referenced across
// the ioctl; Go's heap does not move objects, and buf is on the heap
// because it escapes through the vboxDevice interface.
func (d *vboxGuestDevice) addr(buf []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
}

func (d *vboxGuestDevice) close() error { return d.f.Close() }
