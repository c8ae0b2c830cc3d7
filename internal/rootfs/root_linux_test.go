package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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

// hasFchmodat2 says the kernel has fchmodat2(2) (Linux 6.6), which
// changes a node's mode without opening it.
func hasFchmodat2(t *testing.T) bool {
	t.Helper()
	f := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return unix.Fchmodat(unix.AT_FDCWD, f, 0o644, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// TestChmodSpecialNodes: Chmod changes nodes that cannot be opened (a
// socket: ENXIO; a character device whose major no driver has: ENXIO)
// or must not be waited on (a FIFO without a writer), and still refuses
// a symlink.
func TestChmodSpecialNodes(t *testing.T) {
	r, dir, _ := attackRoot(t)
	nodes := []struct {
		name string
		mode uint32
		dev  int
		root bool // mknod needs CAP_MKNOD
	}{
		{"fifo", unix.S_IFIFO, 0, false},
		{"sock", unix.S_IFSOCK, 0, false},
		// Major 240 is reserved for local, experimental use (the
		// kernel's Documentation/admin-guide/devices.txt): no driver.
		{"chr", unix.S_IFCHR, int(unix.Mkdev(240, 7)), true},
	}
	withoutOpen := hasFchmodat2(t)
	for _, n := range nodes {
		if n.root && os.Geteuid() != 0 {
			t.Logf("%s: not checked, mknod of a device needs root", n.name)
			continue
		}
		if n.mode != unix.S_IFIFO && !withoutOpen {
			t.Logf("%s: not checked, this kernel has no fchmodat2 (Linux 6.6) and the node cannot be opened", n.name)
			continue
		}
		p := filepath.Join(dir, "real", n.name)
		if err := unix.Mknod(p, n.mode|0o600, n.dev); err != nil {
			t.Fatal(err)
		}
		if err := r.Chmod("/real/"+n.name, 0o640); err != nil {
			t.Errorf("Chmod(/real/%s) = %v", n.name, err)
			continue
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("/real/%s after Chmod: %v, %v; want mode 0640", n.name, fi.Mode(), err)
		}
	}
	if err := r.Chmod("/real-link", 0o640); err == nil {
		t.Errorf("Chmod(/real-link) of a symlink succeeded")
	}
	if fi, err := os.Stat(filepath.Join(dir, "real")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("/real after Chmod of a link to it: %v, %v; want 0755 kept", fi.Mode(), err)
	}
}

// unwritable makes the directory d refuse changes for the rest of the
// test and returns the error the kernel then gives: as root, whom modes
// do not stop, through the immutable attribute (EPERM); as anyone else,
// through mode 0555 (EACCES).
func unwritable(t *testing.T, d string) error {
	t.Helper()
	if os.Geteuid() == 0 {
		immutable(t, d)
		return unix.EPERM
	}
	if err := os.Chmod(d, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(d, 0o755) })
	return unix.EACCES
}

// TestUnwritableDirectory: in a directory that refuses changes, every
// write fails with the kernel's reason and leaves the directory as it
// was: no temporary file, no half-made node.
func TestUnwritableDirectory(t *testing.T) {
	r, dir, _ := attackRoot(t)
	ro := filepath.Join(dir, "real/ro")
	if err := os.MkdirAll(filepath.Join(ro, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "f"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := unwritable(t, ro)
	before, err := os.Stat(ro)
	if err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		name string
		do   func() error
	}{
		{"WriteFile new", func() error { return r.WriteFile("/real/ro/new", nil, 0o644) }},
		{"WriteFile over", func() error { return r.WriteFile("/real/ro/f", nil, 0o644) }},
		{"WriteFile deeper", func() error { return r.WriteFile("/real/ro/new/f", nil, 0o644) }},
		{"AppendFile", func() error { return r.AppendFile("/real/ro/new", nil, 0o644) }},
		{"MkdirAll", func() error { _, err := r.MkdirAll("/real/ro/new", 0o755); return err }},
		{"MkdirAll deeper", func() error { _, err := r.MkdirAll("/real/ro/new/deeper", 0o755); return err }},
		{"Symlink", func() error { return r.Symlink("/x", "/real/ro/new") }},
		{"Link", func() error { return r.Link("/real-link", "/real/ro/new") }},
		{"Remove", func() error { return r.Remove("/real/ro/f") }},
		{"RemoveAll", func() error { return r.RemoveAll("/real/ro/sub") }},
	}
	if os.Geteuid() == 0 {
		// The directory's own mode and owner: its owner may change
		// them whatever its mode, the immutable attribute stops root.
		writes = append(writes,
			struct {
				name string
				do   func() error
			}{"Chmod", func() error { return r.Chmod("/real/ro", 0o700) }},
			struct {
				name string
				do   func() error
			}{"Lchown", func() error { return r.Lchown("/real/ro", 4242, 4242) }})
	}
	for _, w := range writes {
		if err := w.do(); !errors.Is(err, want) {
			t.Errorf("%s in an unwritable directory = %v, want %v", w.name, err, want)
		}
	}
	entries, _ := os.ReadDir(ro)
	if len(entries) != 2 {
		t.Errorf("the unwritable directory holds %v, want f and sub", entries)
	}
	if after, err := os.Stat(ro); err != nil || after.Mode() != before.Mode() || after.Sys().(*syscall.Stat_t).Uid != before.Sys().(*syscall.Stat_t).Uid {
		t.Errorf("the unwritable directory changed: %v, %v; was %v", after.Mode(), err, before.Mode())
	}
}

// TestCommitRefused: when the kernel refuses the temporary file its
// owner or mode (an immutable file), Commit fails with that reason and
// the target is not made.
func TestCommitRefused(t *testing.T) {
	r, dir, _ := attackRoot(t)
	for _, tt := range []struct {
		name     string
		mode     fs.FileMode
		uid, gid int
		op       string
	}{
		{"chown", 0o644, 4242, 4242, "chown"},
		{"chmod", 0o751, -1, -1, "chmod"},
	} {
		p := "/real/" + tt.name
		tmp, err := r.CreateTemp(p)
		if err != nil {
			t.Fatal(err)
		}
		immutable(t, filepath.Join(dir, "real", tmp.tmp))
		err = tmp.Commit(tt.mode, tt.uid, tt.gid)
		var pe *fs.PathError
		if !errors.Is(err, unix.EPERM) || !errors.As(err, &pe) || pe.Op != tt.op || pe.Path != p {
			t.Errorf("Commit(%s) of an immutable file = %v, want %s %s: EPERM", p, err, tt.op, p)
		}
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a refused Commit made %s: %v", p, err)
		}
	}
}

// setDefaultACL sets the directory's default POSIX ACL (acl(5)) from its
// xattr encoding.
func setDefaultACL(dir string, acl []byte) error {
	return syscall.Setxattr(dir, "system.posix_acl_default", acl, 0)
}

// exchange swaps the nodes at a and b (renameat2(2) RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
