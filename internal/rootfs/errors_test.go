//go:build linux

package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// op is one of a Root's operations on a path, for tables that run every
// operation against the same hostile paths.
type op struct {
	name string
	do   func(r *Root, p string) error
}

// everyOp is every operation that takes a path inside the root.
func everyOp() []op {
	return []op{
		{"Resolve", func(r *Root, p string) error { _, err := r.Resolve(p); return err }},
		{"Lstat", func(r *Root, p string) error { _, err := r.Lstat(p); return err }},
		{"MkdirAll", func(r *Root, p string) error { _, err := r.MkdirAll(p, 0o755); return err }},
		{"CreateTemp", func(r *Root, p string) error {
			tmp, err := r.CreateTemp(p)
			if err == nil {
				tmp.Abort()
			}
			return err
		}},
		{"WriteFile", func(r *Root, p string) error { return r.WriteFile(p, []byte("x"), 0o644) }},
		{"AppendFile", func(r *Root, p string) error { return r.AppendFile(p, []byte("x"), 0o644) }},
		{"ReadFile", func(r *Root, p string) error { _, err := r.ReadFile(p); return err }},
		{"Remove", func(r *Root, p string) error { return r.Remove(p) }},
		{"RemoveAll", func(r *Root, p string) error { return r.RemoveAll(p) }},
		{"Symlink", func(r *Root, p string) error { return r.Symlink("/real", p) }},
		{"Readlink", func(r *Root, p string) error { _, err := r.Readlink(p); return err }},
		{"Link from", func(r *Root, p string) error { return r.Link(p, "/real/new-link") }},
		{"Link to", func(r *Root, p string) error { return r.Link("/real-link", p) }},
		{"Lchown", func(r *Root, p string) error { return r.Lchown(p, os.Geteuid(), os.Getegid()) }},
		{"Chmod", func(r *Root, p string) error { return r.Chmod(p, 0o700) }},
		{"Locate", func(r *Root, p string) error {
			at, err := r.Locate(p)
			if err == nil {
				at.Close()
			}
			return err
		}},
	}
}

// TestEveryOpRefusesBadPaths: whatever the operation, a relative path,
// a path through a regular file, a path through a symlink loop and a
// path through a chain of more than MaxSymlinks links fail with the
// error that says so, and leave nothing behind.
func TestEveryOpRefusesBadPaths(t *testing.T) {
	r, dir, outside := attackRoot(t)
	if err := os.WriteFile(filepath.Join(dir, "real/file"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	// long0 -> long1 -> ... -> long40 -> /real: 41 links, no loop.
	for i := range MaxSymlinks + 1 {
		target := "long" + strconv.Itoa(i+1)
		if i == MaxSymlinks {
			target = "/real"
		}
		if err := os.Symlink(target, filepath.Join(dir, "long"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	paths := []struct {
		p    string
		want error
	}{
		{"etc/x", ErrNotRelative},
		{"", ErrNotRelative},
		{"/real/file/x", ErrNotDir},
		{"/real/file/x/y", ErrNotDir},
		{"/real-link/file/x", ErrNotDir},
		{"/loop1/x", ErrTooManyLinks},
		{"/real/../loop2/y/z", ErrTooManyLinks},
		{"/long0/x", ErrTooManyLinks},
	}
	for _, o := range everyOp() {
		for _, tt := range paths {
			if err := o.do(r, tt.p); !errors.Is(err, tt.want) {
				t.Errorf("%s(%q) = %v, want %v", o.name, tt.p, err, tt.want)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "real/file")); err != nil || string(b) != "keep" {
		t.Errorf("real/file = %q, %v; want it kept", b, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "real"))
	if len(entries) != 1 {
		t.Errorf("real holds %v, want only file", entries)
	}
	assertOutsideUntouched(t, outside)
}

// TestMaxSymlinksIsTheKernels: a path through exactly MaxSymlinks links
// resolves, as the kernel's own walk does (path_resolution(7)); one more
// is ErrTooManyLinks.
func TestMaxSymlinksIsTheKernels(t *testing.T) {
	r, dir, _ := attackRoot(t)
	for i := range MaxSymlinks {
		target := "c" + strconv.Itoa(i+1)
		if i == MaxSymlinks-1 {
			target = "real"
		}
		if err := os.Symlink(target, filepath.Join(dir, "c"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := r.Resolve("/c0/x"); err != nil || got != "/real/x" {
		t.Errorf("Resolve through %d links = %q, %v; want /real/x", MaxSymlinks, got, err)
	}
	// The kernel agrees: the same chain opened on the host.
	if _, err := os.Stat(filepath.Join(dir, "c0")); err != nil {
		t.Errorf("the host's walk through %d links: %v", MaxSymlinks, err)
	}
	if err := os.Symlink("c0", filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("/c/x"); !errors.Is(err, ErrTooManyLinks) {
		t.Errorf("Resolve through %d links = %v, want ErrTooManyLinks", MaxSymlinks+1, err)
	}
	// ReadFile follows the last component too, under the same bound.
	if err := os.WriteFile(filepath.Join(dir, "real/f"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range MaxSymlinks + 1 {
		target := "/real/r" + strconv.Itoa(i+1)
		if i == MaxSymlinks {
			target = "f"
		}
		if err := os.Symlink(target, filepath.Join(dir, "real/r"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := r.ReadFile("/real/r1"); err != nil || string(b) != "f" {
		t.Errorf("ReadFile through %d links = %q, %v", MaxSymlinks, b, err)
	}
	if _, err := r.ReadFile("/real/r0"); !errors.Is(err, ErrTooManyLinks) {
		t.Errorf("ReadFile through %d links = %v, want ErrTooManyLinks", MaxSymlinks+1, err)
	}
}

// victim is a file outside the root that escapes would hit, and what it
// must still be afterwards.
type victim struct {
	path string
	data string
	mode fs.FileMode
	uid  int
}

func newVictim(t *testing.T, outside string) victim {
	t.Helper()
	v := victim{path: filepath.Join(outside, "x"), data: "victim", mode: 0o600, uid: os.Geteuid()}
	if err := os.WriteFile(v.path, []byte(v.data), v.mode); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		v.uid = 4242
		if err := os.Chown(v.path, v.uid, v.uid); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func (v victim) check(t *testing.T) {
	t.Helper()
	fi, err := os.Lstat(v.path)
	if err != nil {
		t.Fatalf("victim outside the root: %v", err)
	}
	b, _ := os.ReadFile(v.path)
	if string(b) != v.data || fi.Mode() != v.mode || int(fi.Sys().(*syscall.Stat_t).Uid) != v.uid {
		t.Errorf("victim outside the root changed: %q %v uid %d", b, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
	}
	entries, _ := os.ReadDir(filepath.Dir(v.path))
	if len(entries) != 1 {
		t.Errorf("outside the root holds %v, want only the victim", entries)
	}
}

// escapes are paths that would reach outside/x if the walk let symlinks
// or ".." climb above the root.
func escapes() []string {
	return []string{"/up/outside/x", "/chain1/outside/x", "/usr/lib/up/outside/x", "/rel-out/x", "/etc/outside/x", "/real/../../outside/x"}
}

// TestChangesStayInside: chmod, chown, removal, appends and links along
// every escape reach a node inside the root or none, never the file
// outside it; with nothing inside, they fail (the node is missing) or
// make it inside.
func TestChangesStayInside(t *testing.T) {
	// leaves are the operations that leave a node at the path when they
	// succeed.
	leaves := map[string]bool{"MkdirAll": true, "WriteFile": true, "AppendFile": true, "Symlink": true, "Link to": true, "Lchown": true, "Chmod": true}
	for _, o := range everyOp() {
		t.Run(strings.ReplaceAll(o.name, " ", "-"), func(t *testing.T) {
			r, dir, outside := attackRoot(t)
			v := newVictim(t, outside)
			for _, p := range escapes() {
				err := o.do(r, p)
				real, rerr := r.Resolve(p)
				if rerr != nil || real != "/outside/x" {
					t.Fatalf("Resolve(%s) = %q, %v; want /outside/x", p, real, rerr)
				}
				_, lerr := os.Lstat(filepath.Join(dir, "outside/x"))
				switch {
				case err == nil && leaves[o.name] && lerr != nil:
					t.Errorf("%s(%s) succeeded with nothing at /outside/x inside the root", o.name, p)
				case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.EEXIST):
					t.Errorf("%s(%s) = %v, want success inside or ENOENT", o.name, p, err)
				}
				v.check(t)
			}
		})
	}
}

// TestChownChmodInsideOnly: with a node inside the root where an escape
// leads, Chmod and Lchown change that node, and the file outside keeps
// its mode and owner.
func TestChownChmodInsideOnly(t *testing.T) {
	r, dir, outside := attackRoot(t)
	v := newVictim(t, outside)
	inside := filepath.Join(dir, "outside/x")
	if err := os.MkdirAll(filepath.Dir(inside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	if uid == 0 {
		uid = 4343
	}
	for _, p := range escapes() {
		if err := r.Chmod(p, 0o751); err != nil {
			t.Errorf("Chmod(%s) = %v", p, err)
		}
		if err := r.Lchown(p, uid, uid); err != nil {
			t.Errorf("Lchown(%s) = %v", p, err)
		}
	}
	fi, err := os.Lstat(inside)
	if err != nil || fi.Mode() != 0o751 || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
		t.Errorf("/outside/x inside the root: %v, %v; want mode 0751 and uid %d", fi.Mode(), err, uid)
	}
	v.check(t)
}

// TestLchownNeverFollows: Lchown of a symlink changes the link, not
// what it points to, even when that is inside the root.
func TestLchownNeverFollows(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a node another owner")
	}
	r, dir, _ := attackRoot(t)
	if err := r.Lchown("/real-link", 4242, 4343); err != nil {
		t.Fatal(err)
	}
	link, _ := os.Lstat(filepath.Join(dir, "real-link"))
	real, _ := os.Lstat(filepath.Join(dir, "real"))
	if st := link.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4343 {
		t.Errorf("real-link owner = %d:%d, want 4242:4343", st.Uid, st.Gid)
	}
	if st := real.Sys().(*syscall.Stat_t); st.Uid == 4242 || st.Gid == 4343 {
		t.Errorf("real owner = %d:%d: Lchown followed the link", st.Uid, st.Gid)
	}
	// -1 keeps an id.
	if err := r.Lchown("/real-link", -1, 0); err != nil {
		t.Fatal(err)
	}
	link, _ = os.Lstat(filepath.Join(dir, "real-link"))
	if st := link.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 0 {
		t.Errorf("real-link owner = %d:%d, want 4242:0", st.Uid, st.Gid)
	}
}

// TestLstatDescribesEveryKind: Lstat and Loc.Lstat tell the kind,
// permission and special bits, owner, size and inode of a node as the
// kernel has them, never following a last symlink.
func TestLstatDescribesEveryKind(t *testing.T) {
	r, dir, _ := attackRoot(t)
	real := filepath.Join(dir, "real")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(real, "file"), []byte("12345"), 0o644))
	must(unix.Chmod(filepath.Join(real, "file"), 0o4755))
	must(os.Mkdir(filepath.Join(real, "dir"), 0o755))
	must(unix.Chmod(filepath.Join(real, "dir"), 0o3775))
	must(unix.Mkfifo(filepath.Join(real, "fifo"), 0o600))
	must(unix.Mknod(filepath.Join(real, "sock"), unix.S_IFSOCK|0o600, 0))
	tests := []struct {
		p    string
		want fs.FileMode
	}{
		{"/real/file", 0o755 | fs.ModeSetuid},
		{"/real/dir", 0o775 | fs.ModeDir | fs.ModeSetgid | fs.ModeSticky},
		{"/real/fifo", 0o600 | fs.ModeNamedPipe},
		{"/real/sock", 0o600 | fs.ModeSocket},
		{"/real-link", 0o777 | fs.ModeSymlink},
	}
	if os.Geteuid() == 0 {
		must(unix.Mknod(filepath.Join(real, "chr"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
		must(unix.Mknod(filepath.Join(real, "blk"), unix.S_IFBLK|0o600, int(unix.Mkdev(7, 200))))
		tests = append(tests,
			struct {
				p    string
				want fs.FileMode
			}{"/real/chr", 0o600 | fs.ModeDevice | fs.ModeCharDevice},
			struct {
				p    string
				want fs.FileMode
			}{"/real/blk", 0o600 | fs.ModeDevice})
	} else {
		t.Log("device nodes not checked: mknod needs root")
	}
	for _, tt := range tests {
		info, err := r.Lstat(tt.p)
		if err != nil {
			t.Errorf("Lstat(%s) = %v", tt.p, err)
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, tt.p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		want := Info{Mode: tt.want, UID: int(st.Uid), GID: int(st.Gid), Dev: uint64(st.Dev), Ino: st.Ino, Nlink: uint64(st.Nlink), Size: st.Size, Ctime: st.Ctim.Nano()}
		if info != want || fi.Mode() != tt.want {
			t.Errorf("Lstat(%s) = %+v, want %+v (os.Lstat: %v)", tt.p, info, want, fi.Mode())
		}
		if info.IsDir() != (tt.p == "/real/dir") {
			t.Errorf("Lstat(%s).IsDir() = %v", tt.p, info.IsDir())
		}
		at, err := r.Locate(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		if linfo, ok, err := at.Lstat(); linfo != want || !ok || err != nil {
			t.Errorf("Locate(%s).Lstat() = %+v, %v, %v; want %+v", tt.p, linfo, ok, err, want)
		}
		at.Close()
		at.Close() // twice is harmless
	}
	if _, err := r.Lstat("/real/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat(/real/missing) = %v, want ErrNotExist", err)
	}
	if _, err := r.Lstat("/missing/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat(/missing/x) = %v, want ErrNotExist", err)
	}
	// A name the filesystem cannot hold is an error, not "absent".
	at, err := r.Locate("/real/" + strings.Repeat("n", 300))
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	if _, ok, err := at.Lstat(); ok || !errors.Is(err, unix.ENAMETOOLONG) {
		t.Errorf("Loc.Lstat() of a 300-byte name = %v, %v; want ENAMETOOLONG", ok, err)
	}
}

// TestModeConversions: every numeric mode of a config (0 to 07777) turns
// into a FileMode and back unchanged, special bits where Go keeps them.
func TestModeConversions(t *testing.T) {
	for m := 0; m <= 0o7777; m++ {
		fm := ModeFromUnix(m)
		if got := ModeToUnix(fm); got != uint32(m) {
			t.Fatalf("ModeToUnix(ModeFromUnix(%#o)) = %#o", m, got)
		}
		if fm.Perm() != fs.FileMode(m&0o777) || (fm&fs.ModeSetuid != 0) != (m&0o4000 != 0) ||
			(fm&fs.ModeSetgid != 0) != (m&0o2000 != 0) || (fm&fs.ModeSticky != 0) != (m&0o1000 != 0) {
			t.Fatalf("ModeFromUnix(%#o) = %v", m, fm)
		}
	}
	if got := ModeFromUnix(0o17777); got != ModeFromUnix(0o7777) {
		t.Errorf("ModeFromUnix(017777) = %v: bits above 07777 must be dropped", got)
	}
}

// TestOpenDirHostPath: a Root names its directory as given, cleaned, and
// maps real paths back to the host; a missing directory or a file cannot
// be opened as one.
func TestOpenDirHostPath(t *testing.T) {
	base := t.TempDir()
	r, err := Open(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Dir() != base {
		t.Errorf("Dir() = %q, want %q", r.Dir(), base)
	}
	for in, want := range map[string]string{"/": base, "/etc/hosts": base + "/etc/hosts"} {
		if got := r.HostPath(in); got != want {
			t.Errorf("HostPath(%q) = %q, want %q", in, got, want)
		}
	}
	if err := r.Sync(); err != nil {
		t.Errorf("Sync() = %v", err)
	}
	if _, err := Open(filepath.Join(base, "missing")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Open(missing) = %v, want ErrNotExist naming it", err)
	}
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	if _, err := Open(filepath.Join(base, "file")); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("Open(file) = %v, want ENOTDIR", err)
	}
	// The host's root is a root like any other: its HostPath is the
	// real path itself.
	hr, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer hr.Close()
	if got := hr.HostPath("/etc"); got != "/etc" {
		t.Errorf("HostPath(/etc) under / = %q", got)
	}
}
