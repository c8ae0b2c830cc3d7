//go:build linux

package rootfs

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTempRefusals: no temporary file for the root itself; a name too
// long to carry the target's still works; a Temp commits once; a rename
// the kernel refuses (a file over a directory) leaves the directory and
// no temporary file.
func TestTempRefusals(t *testing.T) {
	r, dir, _ := attackRoot(t)
	for _, p := range []string{"/", "/real/.."} {
		if _, err := r.CreateTemp(p); !errors.Is(err, unix.EISDIR) {
			t.Errorf("CreateTemp(%s) = %v, want EISDIR", p, err)
		}
	}
	long := "/real/" + strings.Repeat("l", 250)
	if err := r.WriteFile(long, []byte("long"), 0o644); err != nil {
		t.Errorf("WriteFile of a 250-byte name = %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, long)); err != nil || string(b) != "long" {
		t.Errorf("the 250-byte name holds %q, %v", b, err)
	}

	tmp, err := r.CreateTemp("/real/once")
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(0o644, -1, -1); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(0o644, -1, -1); err == nil || !strings.Contains(err.Error(), "/real/once") {
		t.Errorf("a second Commit = %v, want an error naming /real/once", err)
	}
	if err := tmp.CommitNew(0o644, -1, -1); err == nil {
		t.Errorf("CommitNew after Commit succeeded")
	}
	tmp.Abort() // after Commit: nothing to do, the file stays
	if _, err := os.Stat(filepath.Join(dir, "real/once")); err != nil {
		t.Errorf("Abort after Commit removed the file: %v", err)
	}

	if err := os.MkdirAll(filepath.Join(dir, "real/full/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err = r.CreateTemp("/real/full")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("x"))
	if err := tmp.Commit(0o644, -1, -1); !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		t.Errorf("Commit over a directory = %v, want the rename's refusal", err)
	}
	if err := tmp.Commit(0o644, -1, -1); err == nil {
		t.Errorf("Commit after a failed Commit succeeded")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "real"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".flint-") {
			t.Errorf("a failed Commit left %s", e.Name())
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "real/full/sub")); err != nil || !fi.IsDir() {
		t.Errorf("real/full/sub after a failed Commit: %v", err)
	}
}

// TestCommitOwnerAndSpecialBits: as root, Commit gives the file its owner
// before its mode, so setuid and setgid survive the chown that would
// clear them; a file committed with flint's own ids needs no chown.
func TestCommitOwnerAndSpecialBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file another owner")
	}
	r, dir, _ := attackRoot(t)
	for _, tt := range []struct {
		p        string
		mode     fs.FileMode
		uid, gid int
	}{
		{"/real/suid", 0o755 | fs.ModeSetuid, 4242, 4343},
		{"/real/sgid", 0o750 | fs.ModeSetgid, -1, 4343},
		{"/real/own", 0o640, 0, 0},
	} {
		at, err := r.Locate(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		tmp, err := at.CreateTemp(tt.mode, tt.uid, tt.gid)
		if err != nil {
			t.Fatal(err)
		}
		if err := tmp.Commit(tt.mode, tt.uid, tt.gid); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(dir, tt.p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		wantUID, wantGID := tt.uid, tt.gid
		if wantUID < 0 {
			wantUID = 0
		}
		if fi.Mode() != tt.mode || int(st.Uid) != wantUID || int(st.Gid) != wantGID {
			t.Errorf("%s = %v %d:%d, want %v %d:%d", tt.p, fi.Mode(), st.Uid, st.Gid, tt.mode, wantUID, wantGID)
		}
	}
}

// TestMkdirAllKinds: MkdirAll of the root is nothing to do; over a
// symlink (even to a directory) or a file it is ErrNotDir; a new
// directory gets exactly its mode whatever the umask, its new parents
// 0755.
func TestMkdirAllKinds(t *testing.T) {
	old := syscall.Umask(0o077)
	r, dir, _ := attackRoot(t)
	syscall.Umask(old)
	if created, err := r.MkdirAll("/", 0o700); created || err != nil {
		t.Errorf("MkdirAll(/) = %v, %v; want false, nil", created, err)
	}
	for _, p := range []string{"/real-link", "/dangling", "/loop1"} {
		if _, err := r.MkdirAll(p, 0o755); !errors.Is(err, ErrNotDir) {
			t.Errorf("MkdirAll(%s) over a symlink = %v, want ErrNotDir", p, err)
		}
	}
	// Under umask 077 the kernel would make 0700 directories.
	old = syscall.Umask(0o077)
	defer syscall.Umask(old)
	if created, err := r.MkdirAll("/real/a/b/c", 0o775|fs.ModeSetgid); !created || err != nil {
		t.Fatalf("MkdirAll(/real/a/b/c) = %v, %v", created, err)
	}
	for p, want := range map[string]fs.FileMode{"real/a": 0o755, "real/a/b": 0o755, "real/a/b/c": 0o775 | fs.ModeSetgid} {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Mode().Perm()|fi.Mode()&fs.ModeSetgid != want {
			t.Errorf("%s: %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
}

// TestRemoveKinds: Remove takes a file, a symlink (never what it points
// to) or an empty directory; a directory with something in it stays; a
// missing node or parent is no error; the root itself cannot go.
func TestRemoveKinds(t *testing.T) {
	r, dir, _ := attackRoot(t)
	os.MkdirAll(filepath.Join(dir, "real/empty"), 0o755)
	os.MkdirAll(filepath.Join(dir, "real/full/sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "real/file"), nil, 0o644)
	for _, p := range []string{"/real/file", "/real/empty", "/real-link", "/real/missing", "/missing/x"} {
		if err := r.Remove(p); err != nil {
			t.Errorf("Remove(%s) = %v", p, err)
		}
	}
	for _, p := range []string{"real/file", "real/empty", "real-link"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Remove left %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "real")); err != nil {
		t.Errorf("Remove(/real-link) removed the directory it points to: %v", err)
	}
	if err := r.Remove("/real/full"); !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		t.Errorf("Remove(/real/full) = %v, want ENOTEMPTY", err)
	}
	if err := r.Remove("/"); err == nil {
		t.Errorf("Remove(/) succeeded")
	}
	for _, p := range []string{"/", "/real/.."} {
		if err := r.RemoveAll(p); !errors.Is(err, unix.EBUSY) {
			t.Errorf("RemoveAll(%s) = %v, want EBUSY", p, err)
		}
	}
	if err := r.RemoveAll("/missing/x"); err != nil {
		t.Errorf("RemoveAll(/missing/x) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "usr/lib")); err != nil {
		t.Errorf("the tree lost /usr/lib: %v", err)
	}
}

// TestLinksAndReadlink: Symlink writes its target literally and never
// replaces; Readlink gives it back, however long; Link makes a hard link
// to the node itself (a symlink stays a symlink) and never replaces.
func TestLinksAndReadlink(t *testing.T) {
	r, dir, _ := attackRoot(t)
	long := "/" + strings.Repeat("t/", 1000) + "end" // past Readlink's first buffer
	for target, p := range map[string]string{"../x": "/real/rel", outsideTarget: "/real/abs", long: "/real/long"} {
		if err := r.Symlink(target, p); err != nil {
			t.Fatalf("Symlink(%s) = %v", p, err)
		}
		if got, err := r.Readlink(p); err != nil || got != target {
			t.Errorf("Readlink(%s) = %q, %v; want %q", p, got, err, target)
		}
	}
	if err := r.Symlink("/other", "/real/rel"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Symlink over a symlink = %v, want ErrExist", err)
	}
	if _, err := r.Readlink("/real"); !errors.Is(err, unix.EINVAL) {
		t.Errorf("Readlink of a directory = %v, want EINVAL", err)
	}
	if err := r.Link("/real-link", "/real/hard"); err != nil {
		t.Fatal(err)
	}
	a, _ := os.Lstat(filepath.Join(dir, "real-link"))
	b, err := os.Lstat(filepath.Join(dir, "real/hard"))
	if err != nil || !os.SameFile(a, b) || b.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Link(/real-link): %v, %v; want the same symlink", b, err)
	}
	if err := r.Link("/real/missing", "/real/h2"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Link to a missing node = %v, want ErrNotExist", err)
	}
	if err := r.Link("/real-link", "/real/rel"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Link over a node = %v, want ErrExist", err)
	}
	if err := r.Link("/real", "/real2"); !errors.Is(err, unix.EPERM) {
		t.Errorf("Link of a directory = %v, want EPERM", err)
	}
}

// outsideTarget is a symlink target naming a host path, written as is.
const outsideTarget = "/tmp/../etc/passwd"

// TestAppendKinds: OpenAppend appends to a regular file, keeping its
// mode; creates a missing one with exactly its mode; and refuses what is
// not a regular file without blocking on it.
func TestAppendKinds(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	r, dir, _ := attackRoot(t)
	os.WriteFile(filepath.Join(dir, "real/log"), []byte("a"), 0o600)
	os.Chmod(filepath.Join(dir, "real/log"), 0o640)
	if err := r.AppendFile("/real/log", []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendFile("/real/new/log", []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]struct {
		data string
		mode fs.FileMode
	}{"real/log": {"ab", 0o640}, "real/new/log": {"c", 0o644}} {
		b, _ := os.ReadFile(filepath.Join(dir, p))
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil || string(b) != want.data || fi.Mode() != want.mode {
			t.Errorf("%s = %q %v, %v; want %q %v", p, b, fi.Mode(), err, want.data, want.mode)
		}
	}
	// A FIFO without a reader: open(2) with O_NONBLOCK fails at once
	// (ENXIO) instead of waiting for one.
	if err := unix.Mkfifo(filepath.Join(dir, "real/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendFile("/real/fifo", []byte("x"), 0o644); !errors.Is(err, unix.ENXIO) {
		t.Errorf("AppendFile to a FIFO = %v, want ENXIO", err)
	}
	if err := r.AppendFile("/real", []byte("x"), 0o644); !errors.Is(err, unix.EISDIR) {
		t.Errorf("AppendFile to a directory = %v, want EISDIR", err)
	}
	if err := r.AppendFile("/real-link", []byte("x"), 0o644); !errors.Is(err, unix.ELOOP) {
		t.Errorf("AppendFile to a symlink = %v, want ELOOP", err)
	}
	if os.Geteuid() == 0 {
		// /dev/null's device numbers: opens for writing, is no file.
		if err := unix.Mknod(filepath.Join(dir, "real/null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		if err := r.AppendFile("/real/null", []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("AppendFile to a device = %v, want not a regular file", err)
		}
	}
}

// TestReadFileKinds: ReadFile follows a last symlink, relative or
// absolute, re-rooted; a dangling one is ErrNotExist; a directory cannot
// be read.
func TestReadFileKinds(t *testing.T) {
	r, dir, _ := attackRoot(t)
	os.WriteFile(filepath.Join(dir, "real/f"), []byte("f"), 0o644)
	os.Symlink("f", filepath.Join(dir, "real/rel"))
	os.Symlink("../real-link/f", filepath.Join(dir, "usr/abs"))
	for _, p := range []string{"/real/rel", "/usr/abs", "/real-link/rel"} {
		if b, err := r.ReadFile(p); err != nil || string(b) != "f" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if _, err := r.ReadFile("/dangling"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(/dangling) = %v, want ErrNotExist", err)
	}
	if _, err := r.ReadFile("/real"); !errors.Is(err, unix.EISDIR) {
		t.Errorf("ReadFile(/real) = %v, want EISDIR", err)
	}
	if _, err := r.ReadFile("/loop1"); !errors.Is(err, ErrTooManyLinks) {
		t.Errorf("ReadFile(/loop1) = %v, want ErrTooManyLinks", err)
	}
}

// TestLocWithoutParent: a Loc whose directory is missing knows its real
// path, says the node is absent, and its CreateTemp makes the parents.
func TestLocWithoutParent(t *testing.T) {
	r, dir, _ := attackRoot(t)
	at, err := r.Locate("/dangling/a/f")
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	if at.Real() != "/does/not/exist/a/f" {
		t.Errorf("Real() = %q", at.Real())
	}
	if _, ok, err := at.Lstat(); ok || err != nil {
		t.Errorf("Lstat() = %v, %v; want absent", ok, err)
	}
	tmp, err := at.CreateTemp(0o600, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.CommitNew(0o600, -1, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "does/not/exist/a/f")); err != nil {
		t.Errorf("the file is not where Real said: %v", err)
	}
	if _, err := r.Locate("rel"); !errors.Is(err, ErrNotRelative) {
		t.Errorf("Locate(rel) = %v, want ErrNotRelative", err)
	}
}

// TestCacheIsBounded: writing into more directories than the cache
// holds keeps it at its bound, and every write still lands.
func TestCacheIsBounded(t *testing.T) {
	r, dir, _ := attackRoot(t)
	n := maxCachedDirs + 20
	for i := range n {
		p := "/many/" + strconv.Itoa(i) + "/f"
		if err := r.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile(p, []byte("again"), 0o644); err != nil { // from the cache when it has room
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	cached := len(r.dirs)
	r.mu.Unlock()
	if cached > maxCachedDirs {
		t.Errorf("the cache holds %d directories, want at most %d", cached, maxCachedDirs)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "many"))
	if len(entries) != n {
		t.Errorf("many holds %d directories, want %d", len(entries), n)
	}
}

// TestLocHoldsItsDirectoryAcrossASwap: once a Loc holds its directory,
// the directory renamed away and a symlink out of the root put in its
// place cannot redirect the write: it lands in the directory the Loc
// holds, inside the root.
func TestLocHoldsItsDirectoryAcrossASwap(t *testing.T) {
	r, dir, outside := attackRoot(t)
	os.MkdirAll(filepath.Join(dir, "real/d"), 0o755)
	at, err := r.Locate("/real/d/f")
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	if err := os.Rename(filepath.Join(dir, "real/d"), filepath.Join(dir, "real/moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "real/d")); err != nil {
		t.Fatal(err)
	}
	tmp, err := at.CreateTemp(0o644, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("held"))
	if err := tmp.Commit(0o644, -1, -1); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "real/moved/f")); err != nil || string(b) != "held" {
		t.Errorf("real/moved/f = %q, %v; want the write there", b, err)
	}
	assertOutsideUntouched(t, outside)
}

// TestSwapRace: while another goroutine keeps exchanging a directory in
// the root with a symlink out of it (renameat2 RENAME_EXCHANGE, so the
// name always exists), writes, links, chmods and directories through
// that name land inside the root, whichever the walk met, or fail; never
// outside.
func TestSwapRace(t *testing.T) {
	r, dir, outside := attackRoot(t)
	sw := filepath.Join(dir, "real/sw")
	other := filepath.Join(dir, "real/other")
	if err := os.Mkdir(sw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, other); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(dir, "real/rel")
	if err := os.Symlink("../../outside", rel); err != nil {
		t.Fatal(err)
	}
	if err := exchange(rel, rel); errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		t.Skipf("the filesystem of %s cannot exchange names (renameat2 RENAME_EXCHANGE): %v", dir, err)
	}
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				close(done)
				return
			default:
			}
			with := other
			if i%2 == 1 {
				with = rel
			}
			if err := exchange(sw, with); err != nil {
				done <- err
				return
			}
		}
	}()
	for i := range 2000 {
		r.Forget() // walk the whole path every time
		p := "/real/sw/f" + strconv.Itoa(i%7)
		switch i % 4 {
		case 0:
			r.WriteFile(p, []byte("x"), 0o644)
		case 1:
			r.MkdirAll(p+"d/e", 0o755)
		case 2:
			r.Symlink("/x", p+"l")
		case 3:
			r.Chmod(p, 0o600)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("exchanging the directory and the link: %v", err)
	}
	assertOutsideUntouched(t, outside)
}

// createNew makes p with CreateNew, mode 0640, and writes data to it;
// Direct must be direct.
func createNew(t *testing.T, r *Root, p, data string, direct bool) *Temp {
	t.Helper()
	at, err := r.Locate(p)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	f, err := at.CreateNew(0o640, -1, -1)
	if err != nil {
		t.Fatalf("CreateNew(%s) = %v", p, err)
	}
	if f.Direct() != direct {
		t.Errorf("CreateNew(%s).Direct() = %v, want %v", p, f.Direct(), direct)
	}
	f.Write([]byte(data))
	return f
}

// TestCreateNew: a file made with no name appears at its path only when
// committed, with what was written and its mode, and makes missing
// parents; over a node already there (a file, a symlink, dangling or not)
// Commit is fs.ErrExist and leaves the node untouched, and
// CommitNewOrSame accepts only exactly the same file; Abort leaves
// nothing; symlinks in the parents stay inside the root.
func TestCreateNew(t *testing.T) {
	r, dir, outside := attackRoot(t)
	create := func(p string) *Temp { return createNew(t, r, p, "data", true) }
	for _, p := range []string{"/real/new", "/missing/parents/new", "/etc/real/through-link", "/abs-out/inside"} {
		f := create(p)
		real, _ := r.Resolve(p)
		if _, err := os.Lstat(filepath.Join(dir, real)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s before Commit: %v, want nothing there", p, err)
		}
		if err := f.Commit(0o640, -1, -1); err != nil {
			t.Fatalf("Commit(%s) = %v", p, err)
		}
		fi, err := os.Lstat(filepath.Join(dir, real))
		if b, _ := os.ReadFile(filepath.Join(dir, real)); err != nil || string(b) != "data" || fi.Mode() != 0o640 {
			t.Errorf("CreateNew(%s) made %v, %q (%v); want data 0640", p, fi, b, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, "inside")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CreateNew through abs-out wrote outside the root: %v", err)
	}
	for _, p := range []string{"/real/new", "/dangling", "/real-link"} {
		before, _ := os.Readlink(filepath.Join(dir, p))
		if err := create(p).Commit(0o640, -1, -1); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Commit(%s) over a node = %v, want fs.ErrExist", p, err)
		}
		if after, _ := os.Readlink(filepath.Join(dir, p)); after != before {
			t.Errorf("Commit(%s) changed the link: %q, was %q", p, after, before)
		}
	}
	if same, err := create("/real/new").CommitNewOrSame(0o640, -1, -1); !same || err != nil {
		t.Errorf("CommitNewOrSame over the same file = %v, %v; want same", same, err)
	}
	f := create("/real/new")
	f.Write([]byte("more"))
	if same, err := f.CommitNewOrSame(0o640, -1, -1); same || !errors.Is(err, fs.ErrExist) {
		t.Errorf("CommitNewOrSame over another file = %v, %v; want fs.ErrExist", same, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real/new")); string(b) != "data" {
		t.Errorf("real/new = %q after the refused commits, want data", b)
	}
	create("/real/aborted").Abort()
	if _, err := os.Lstat(filepath.Join(dir, "real/aborted")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("real/aborted after Abort: %v, want nothing", err)
	}
	if sum, err := create("/real/summed").Sum256(); err != nil || sum != sha256.Sum256([]byte("data")) {
		t.Errorf("Sum256 of a CreateNew file = %x, %v", sum, err)
	}
}

// TestCreateNewWithoutTmpfile: on a filesystem that makes no unnamed file
// (O_TMPFILE answers EOPNOTSUPP, as vfat's does), CreateNew makes a named
// temporary file beside the path instead (not Direct), which Commit and
// CommitNewOrSame give its name as CreateNew's own, refusing what is
// there but exactly the same file; Abort leaves nothing.
func TestCreateNewWithoutTmpfile(t *testing.T) {
	saved := openUnnamed
	t.Cleanup(func() { openUnnamed = saved })
	openUnnamed = func(int, uint32) (int, error) { return -1, unix.EOPNOTSUPP }

	r, dir, _ := attackRoot(t)
	create := func(p, data string) *Temp { return createNew(t, r, p, data, false) }
	names := func() []string {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(dir, "real"))
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}
	before := names()
	f := create("/real/new", "data")
	if _, err := os.Lstat(filepath.Join(dir, "real/new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("real/new before Commit: %v, want nothing there", err)
	}
	if err := f.Commit(0o640, -1, -1); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	fi, err := os.Lstat(filepath.Join(dir, "real/new"))
	if b, _ := os.ReadFile(filepath.Join(dir, "real/new")); err != nil || string(b) != "data" || fi.Mode() != 0o640 {
		t.Errorf("real/new = %v, %q (%v); want data 0640", fi, b, err)
	}
	if same, err := create("/real/new", "data").CommitNewOrSame(0o640, -1, -1); !same || err != nil {
		t.Errorf("CommitNewOrSame over the same file = %v, %v; want same", same, err)
	}
	if same, err := create("/real/new", "more").CommitNewOrSame(0o640, -1, -1); same || !errors.Is(err, fs.ErrExist) {
		t.Errorf("CommitNewOrSame over another file = %v, %v; want fs.ErrExist", same, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real/new")); string(b) != "data" {
		t.Errorf("real/new = %q after the refused commit, want data", b)
	}
	create("/real/aborted", "data").Abort()
	if got, want := names(), slices.Sorted(slices.Values(append(before, "new"))); !slices.Equal(got, want) {
		t.Errorf("real/ holds %q, want %q: no temporary file left", got, want)
	}
}
