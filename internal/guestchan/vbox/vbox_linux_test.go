//go:build linux

package vbox

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestVBoxGuestDeviceIoctl runs the real ioctl path against /dev/null,
// which answers every vboxguest request with ENOTTY: the error must come
// back wrapped, naming the request, and nothing else may happen.
func TestVBoxGuestDeviceIoctl(t *testing.T) {
	dev, err := Open("/dev/null")
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	_, err = Connect(dev)
	if !errors.Is(err, unix.ENOTTY) {
		t.Fatalf("Connect(/dev/null) = %v, want ENOTTY", err)
	}
	t.Log(err)
	if a := dev.Addr(make([]byte, 4)); a == 0 {
		t.Error("addr of a buffer is 0")
	}
}
