package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL of <linux/fs.h>, which x/sys/unix
// does not name.
const fsImmutableFL = 0x10

// immutable sets the immutable attribute (chattr +i, ioctl_iflags(2)) on
// the node at p, which then refuses every change even to root, and
// clears it when the test ends. It skips the test where that cannot be
// done: without CAP_LINUX_IMMUTABLE (not root), or on a filesystem
// without the attribute.
func immutable(t *testing.T, p string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file immutable (CAP_LINUX_IMMUTABLE)")
	}
	set := func(on bool) error {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		flags, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
		if err != nil {
			return err
		}
		if on {
			flags |= fsImmutableFL
		} else {
			flags &^= fsImmutableFL
		}
		return unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, flags)
	}
	if err := set(true); err != nil {
		t.Skipf("cannot make %s immutable on this filesystem: %v", p, err)
	}
	t.Cleanup(func() {
		if err := set(false); err != nil {
			t.Errorf("clearing the immutable attribute of %s: %v", p, err)
		}
	})
}

// TestRemoveAllReportsRefusal: a file the kernel refuses to unlink is
// reported with the kernel's reason (EPERM), not as "not a directory"
// from the attempt to empty it as a directory.
func TestRemoveAllReportsRefusal(t *testing.T) {
	r, dir, _ := attackRoot(t)
	for _, p := range []string{"real/locked", "real/d/locked"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		immutable(t, filepath.Join(dir, p))
	}
	for _, p := range []string{"/real/locked", "/real/d"} {
		if err := r.RemoveAll(p); !errors.Is(err, unix.EPERM) {
			t.Errorf("RemoveAll(%s) = %v, want EPERM", p, err)
		}
		if err := r.Remove(p); !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ENOTEMPTY) {
			t.Errorf("Remove(%s) = %v, want EPERM or ENOTEMPTY", p, err)
		}
	}
	for _, p := range []string{"real/locked", "real/d/locked"} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != "keep" {
			t.Errorf("%s = %q, %v; want it kept", p, b, err)
		}
	}
}
