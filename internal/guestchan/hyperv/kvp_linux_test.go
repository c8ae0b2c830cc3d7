//go:build linux

package hyperv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flintboot/flint/internal/guestchan/hyperv/hypervtest"
)

// TestKVPDeviceOverSocket runs the real poll/read/write code of device
// against a SOCK_SEQPACKET socket pair, which keeps message boundaries as
// hv_utils' character device does; a goroutine plays the driver.
func TestKVPDeviceOverSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("socketpair: %v", err)
	}
	dev := &device{fd: fds[0], path: "socketpair"}
	defer dev.Close()
	driver := fds[1]
	defer unix.Close(driver)

	start := time.Now()
	if _, err := dev.Recv(50 * time.Millisecond); !errors.Is(err, ErrQuiet) {
		t.Fatalf("recv on a quiet channel = %v, want ErrQuiet", err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("recv gave up after %v, want about 50ms", d)
	}

	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 8192)
		n, err := unix.Read(driver, buf)
		if err != nil || n != 7430 || buf[0] != 100 {
			done <- errors.New("no registration")
			return
		}
		unix.Write(driver, hypervtest.HostMsg(100, 0))
		unix.Write(driver, hypervtest.HostSet(0, "ignition.config", "{}"))
		n, err = unix.Read(driver, buf)
		if err != nil || n != 7430 || hypervtest.ReplyStatus(buf) != 0 {
			done <- errors.New("no reply to the SET")
			return
		}
		done <- nil
	}()
	pools, err := ReadChannel(context.Background(), dev, 200*time.Millisecond, 10*time.Second)
	if err != nil {
		t.Fatalf("ReadChannel: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, ok := pools.Get(0, "ignition.config"); !ok || v != "{}" {
		t.Errorf("pool 0 = %v, want ignition.config={}", pools[0])
	}
}

func TestOpenKVPChannelMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "hv_kvp"))
	if !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrBusy) {
		t.Errorf("Open(missing) = %v, want ENOENT", err)
	}
}
