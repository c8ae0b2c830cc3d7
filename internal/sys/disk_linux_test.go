package sys

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loop attaches a sparse image of mib MiB to a free loop device with
// partition support, and detaches that device when the test ends. It
// skips without root.
func loop(t *testing.T, mib int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create loop devices (make test runs it as root)")
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("losetup is not installed")
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, mib<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", "-P", img).Output()
	if err != nil {
		t.Skipf("losetup -f --show -P: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// kernelPart reads a partition's start and size (512-byte units) from
// sysfs, or reports it absent.
func kernelPart(t *testing.T, dev string, n int) (start, size int64, ok bool) {
	t.Helper()
	dir := filepath.Join("/sys/class/block", filepath.Base(dev)+"p"+strconv.Itoa(n))
	read := func(f string) int64 {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := os.Stat(dir); err != nil {
		return 0, 0, false
	}
	return read("start"), read("size"), true
}

// TestDiskPartitions adds, resizes and removes partitions in the kernel
// of a loop device for real, and checks that a partition in use is not
// removed.
func TestDiskPartitions(t *testing.T) {
	dev := loop(t, 16)
	d, err := OpenDisk(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.AddPartition(2, 1<<20, 4<<20); err != nil {
		t.Fatalf("AddPartition(2) = %v", err)
	}
	if s, n, ok := kernelPart(t, dev, 2); !ok || s != 2048 || n != 8192 {
		t.Fatalf("after AddPartition(2): %d+%d (%v), want 2048+8192", s, n, ok)
	}
	if err := d.AddPartition(3, 4<<20, 1<<20); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("AddPartition(3) over partition 2 = %v, want EBUSY", err)
	}
	if err := d.ResizePartition(2, 1<<20, 8<<20); err != nil {
		t.Fatalf("ResizePartition(2) = %v", err)
	}
	if s, n, ok := kernelPart(t, dev, 2); !ok || s != 2048 || n != 16384 {
		t.Fatalf("after ResizePartition(2): %d+%d (%v), want 2048+16384", s, n, ok)
	}
	// An open partition is busy: the kernel refuses to drop it.
	p, err := waitOpen(dev + "p2")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.DeletePartition(2); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("DeletePartition(2) while open = %v, want EBUSY", err)
	}
	p.Close()
	if err := d.DeletePartition(2); err != nil {
		t.Fatalf("DeletePartition(2) = %v", err)
	}
	if _, _, ok := kernelPart(t, dev, 2); ok {
		t.Errorf("partition 2 is still in sysfs after DeletePartition")
	}
	if err := d.DeletePartition(2); !errors.Is(err, syscall.ENXIO) {
		t.Errorf("DeletePartition(2) again = %v, want ENXIO", err)
	}
}

// waitOpen opens a partition node, which devtmpfs makes shortly after
// the kernel adds the partition.
func waitOpen(node string) (*os.File, error) {
	var err error
	for range 500 {
		var f *os.File
		if f, err = os.OpenFile(node, os.O_RDONLY|syscall.O_EXCL, 0); err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, err
}

// TestDiskFromFile tells the kernel of a partition through a descriptor
// opened elsewhere (flint install's O_EXCL one), then has it reread the
// table the disk really holds: none, so the partition goes.
func TestDiskFromFile(t *testing.T) {
	dev := loop(t, 16)
	f, err := os.OpenFile(dev, os.O_RDWR|syscall.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := DiskFromFile(f)
	if err := d.AddPartition(1, 1<<20, 4<<20); err != nil {
		t.Fatalf("AddPartition(1) = %v", err)
	}
	if s, n, ok := kernelPart(t, dev, 1); !ok || s != 2048 || n != 8192 {
		t.Fatalf("after AddPartition(1): %d+%d (%v), want 2048+8192", s, n, ok)
	}
	if err := d.RereadPartitionTable(); err != nil {
		t.Fatalf("RereadPartitionTable() = %v", err)
	}
	if _, _, ok := kernelPart(t, dev, 1); ok {
		t.Errorf("partition 1 is still in sysfs after rereading a disk with no table")
	}
}

// TestCloseWriterKeepsTheLock: the disk stays locked after CloseWriter,
// whose close a watch sees (IN_CLOSE_WRITE, what udevd's watch answers)
// while the lock is held; Close releases it. A regular file stands in for
// the disk: flock and inotify treat them alike.
func TestCloseWriterKeepsTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(path, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, path, unix.IN_CLOSE_WRITE); err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	locked := func() bool {
		err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			unix.Flock(int(other.Fd()), unix.LOCK_UN)
			return false
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			t.Fatalf("flock: %v", err)
		}
		return true
	}
	closeWrites := func() int {
		b := make([]byte, 4096)
		n, err := unix.Read(in, b)
		if errors.Is(err, unix.EAGAIN) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return n / unix.SizeofInotifyEvent
	}

	d, err := OpenDisk(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.WriteAt([]byte("table"), 512); err != nil {
		t.Fatal(err)
	}
	if !locked() {
		t.Fatal("OpenDisk: the disk is not locked")
	}
	if err := d.CloseWriter(); err != nil {
		t.Fatal(err)
	}
	if n := closeWrites(); n != 1 {
		t.Errorf("CloseWriter: %d IN_CLOSE_WRITE events, want 1", n)
	}
	if !locked() {
		t.Error("CloseWriter: the disk is no longer locked")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if locked() {
		t.Error("Close: the disk is still locked")
	}
	if n := closeWrites(); n != 0 {
		t.Errorf("Close: %d more IN_CLOSE_WRITE events, want 0 (the lock's descriptor is read-only)", n)
	}
}
