//go:build linux

package platform

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestVBoxGuestDeviceIoctl runs the real ioctl path against /dev/null,
// which answers every vboxguest request with ENOTTY: the error must come
// back wrapped, naming the request, and nothing else may happen.
func TestVBoxGuestDeviceIoctl(t *testing.T) {
	dev, err := openVBoxGuest("/dev/null")
	if errors.Is(err, errVBoxUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer dev.close()
	_, err = connectGuestProps(dev)
	if !errors.Is(err, unix.ENOTTY) {
		t.Fatalf("connectGuestProps(/dev/null) = %v, want ENOTTY", err)
	}
	t.Log(err)
	if a := dev.addr(make([]byte, 4)); a == 0 {
		t.Error("addr of a buffer is 0")
	}
}
