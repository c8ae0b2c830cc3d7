//go:build unix

package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// attackRoot makes a sandbox with a root and an "outside" directory beside
// it that nothing may ever touch, and symlinks in the root that point out
// in every way a target's symlinks can.
func attackRoot(t *testing.T) (root *Root, dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "usr/lib"), filepath.Join(dir, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"etc":        "/",                 // /sysroot/etc -> /
		"up":         "../../../../..",    // a chain of .. far above the root
		"chain1":     "chain2/../..",      // through .. via another link
		"chain2":     "usr/lib/../../..",  // more ..
		"abs-out":    outside,             // the host path of outside, absolute
		"rel-out":    "../outside",        // relative, out of the root
		"loop1":      "loop2",             // a loop
		"loop2":      "loop1",             //
		"real-link":  "/real",             // an absolute link that stays inside
		"dangling":   "/does/not/exist",   // a broken link
		"usr/lib/up": "../../../../../..", // deeper
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir, outside
}

// assertOutsideUntouched fails if anything was created in outside.
func assertOutsideUntouched(t *testing.T, outside string) {
	t.Helper()
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("outside the root: %v was written", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "x")); err == nil {
		t.Fatalf("file written beside the root")
	}
}

func TestResolveConfined(t *testing.T) {
	r, _, _ := attackRoot(t)
	tests := []struct {
		in, want string
	}{
		{"/etc/passwd", "/passwd"},
		{"/up/x", "/x"},
		{"/chain1/x", "/x"},
		{"/usr/lib/up/x", "/x"},
		{"/rel-out/x", "/outside/x"},
		{"/real-link/x", "/real/x"},
		{"/real-link", "/real-link"}, // last component not followed
		{"/dangling/a/b", "/does/not/exist/a/b"},
		{"/new/dir/file", "/new/dir/file"},
		{"/", "/"},
		{"/a/../etc/x", "/x"},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
	// abs-out is an absolute host path: re-rooted, it names a missing
	// directory inside the root.
	got, err := r.Resolve("/abs-out/x")
	if err != nil || !strings.HasSuffix(got, "/outside/x") || got == "" {
		t.Errorf("Resolve(/abs-out/x) = %q, %v", got, err)
	}
	if _, err := r.Resolve("/loop1/x"); !errors.Is(err, ErrTooManyLinks) {
		t.Errorf("Resolve(/loop1/x) error = %v, want ErrTooManyLinks", err)
	}
	if _, err := r.Resolve("relative"); !errors.Is(err, ErrNotRelative) {
		t.Errorf("Resolve(relative) error = %v, want ErrNotRelative", err)
	}
}

func TestWritesStayInside(t *testing.T) {
	ops := []struct {
		name string
		do   func(r *Root, p string) error
	}{
		{"WriteFile", func(r *Root, p string) error { return r.WriteFile(p, []byte("x"), 0o644) }},
		{"AppendFile", func(r *Root, p string) error { return r.AppendFile(p, []byte("x"), 0o644) }},
		{"Symlink", func(r *Root, p string) error { return r.Symlink("/target", p) }},
		{"MkdirAll", func(r *Root, p string) error { _, err := r.MkdirAll(p, 0o755); return err }},
		{"Link", func(r *Root, p string) error {
			if err := r.WriteFile("/real/src", nil, 0o644); err != nil {
				return err
			}
			return r.Link("/real/src", p)
		}},
	}
	paths := []string{"/etc/x", "/up/x", "/chain1/x", "/usr/lib/up/x", "/rel-out/x", "/abs-out/x", "/dangling/x"}
	for _, op := range ops {
		for _, p := range paths {
			t.Run(op.name+p, func(t *testing.T) {
				r, dir, outside := attackRoot(t)
				if err := op.do(r, p); err != nil {
					t.Fatalf("%s(%s) = %v", op.name, p, err)
				}
				real, err := r.Resolve(p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Lstat(filepath.Join(dir, real)); err != nil {
					t.Errorf("%s(%s): nothing at %s inside the root: %v", op.name, p, real, err)
				}
				assertOutsideUntouched(t, outside)
			})
		}
	}
}

func TestChmodChownNeverFollowLast(t *testing.T) {
	r, dir, outside := attackRoot(t)
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "to-victim")); err != nil {
		t.Fatal(err)
	}
	if err := r.Chmod("/to-victim", 0o777); err == nil {
		t.Errorf("Chmod through a final symlink succeeded")
	}
	if err := r.Lchown("/to-victim", os.Getuid(), os.Getgid()); err != nil {
		t.Errorf("Lchown(/to-victim) = %v", err)
	}
	st, _ := os.Stat(victim)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("victim mode = %v, want 0600", st.Mode())
	}
	if _, err := r.OpenAppend("/to-victim", 0o644); err == nil {
		t.Errorf("OpenAppend through a final symlink succeeded")
	}
	// WriteFile replaces the symlink itself.
	if err := r.WriteFile("/to-victim", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); len(b) != 0 {
		t.Errorf("victim written through a symlink: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "to-victim")); !fi.Mode().IsRegular() {
		t.Errorf("to-victim is %v, want a regular file", fi.Mode())
	}
}

// TestLinkCreatedThenWrittenThrough is the config that creates a symlink
// and then writes through it: the write follows it, re-rooted.
func TestLinkCreatedThenWrittenThrough(t *testing.T) {
	r, dir, outside := attackRoot(t)
	if err := r.Symlink(outside, "/opt"); err != nil {
		t.Fatal(err)
	}
	if err := r.Symlink("../../..", "/real/esc"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/opt/a/file", "/real/esc/b"} {
		if err := r.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatalf("WriteFile(%s) = %v", p, err)
		}
	}
	assertOutsideUntouched(t, outside)
	if _, err := os.Stat(filepath.Join(dir, outside, "a/file")); err != nil {
		t.Errorf("re-rooted write missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err != nil {
		t.Errorf("write through .. link missing: %v", err)
	}
}

func TestTempCommitAndAbort(t *testing.T) {
	r, dir, _ := attackRoot(t)
	tmp, err := r.CreateTemp("/etc/deep/file")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("partial"))
	tmp.Abort()
	entries, _ := os.ReadDir(filepath.Join(dir, "deep"))
	if len(entries) != 0 {
		t.Errorf("Abort left %v", entries)
	}
	tmp, err = r.CreateTemp("/etc/deep/file")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("whole"))
	if err := tmp.Commit(0o640|fs.ModeSetgid, -1, -1); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "deep/file"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o640|fs.ModeSetgid {
		t.Errorf("mode = %v, want g+s 0640", fi.Mode())
	}
	if di, _ := os.Stat(filepath.Join(dir, "deep")); di.Mode().Perm() != 0o755 {
		t.Errorf("parent mode = %v, want 0755", di.Mode())
	}
	if tmp.Real != "/deep/file" {
		t.Errorf("Real = %q", tmp.Real)
	}
}

func TestMkdirAllRemoveAllReadFile(t *testing.T) {
	r, dir, outside := attackRoot(t)
	if created, err := r.MkdirAll("/d/e", 0o1777|fs.ModeSticky); err != nil || !created {
		t.Fatalf("MkdirAll = %v, %v", created, err)
	}
	if created, err := r.MkdirAll("/d/e", 0o755); err != nil || created {
		t.Fatalf("MkdirAll again = %v, %v", created, err)
	}
	if err := r.WriteFile("/d/f", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.MkdirAll("/d/f", 0o755); !errors.Is(err, ErrNotDir) {
		t.Errorf("MkdirAll over a file error = %v, want ErrNotDir", err)
	}
	// A link inside the tree to outside: RemoveAll removes the link.
	os.WriteFile(filepath.Join(outside, "keep"), []byte("k"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "d/e/out"))
	if err := r.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveAll left /d: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("RemoveAll followed a symlink out: %v", err)
	}
	os.Remove(filepath.Join(outside, "keep"))
	if err := r.Remove("/nothing/here"); err != nil {
		t.Errorf("Remove(missing) = %v", err)
	}
	// ReadFile follows the last component, re-rooted.
	os.WriteFile(filepath.Join(dir, "real/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644)
	os.Symlink("/real/passwd", filepath.Join(dir, "usr/lib/passwd"))
	if b, err := r.ReadFile("/etc/usr/lib/passwd"); err != nil || !strings.HasPrefix(string(b), "root:") {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := r.ReadFile("/abs-out/keep"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile escaped: %v", err)
	}
}

// TestCacheFollowsRemovals: the directory cache must not keep a path
// leading where it used to once the directory is replaced by a symlink,
// through the Root or behind its back (then Forget).
func TestCacheFollowsRemovals(t *testing.T) {
	r, dir, outside := attackRoot(t)
	if err := r.WriteFile("/a/b/f", []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := r.Symlink("/real", "/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/a/b/g", []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "real/g")); err != nil {
		t.Errorf("write after the directory became a symlink did not follow it: %v", err)
	}
	// Behind its back: the cached /a/ now leads to a directory outside
	// the tree's path, which Forget drops.
	if err := r.WriteFile("/c/d/f", []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "c/d"))
	os.Symlink(outside, filepath.Join(dir, "c/d"))
	r.Forget()
	if err := r.WriteFile("/c/d/g", []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertOutsideUntouched(t, outside)
	if _, err := os.Stat(filepath.Join(dir, outside, "g")); err != nil {
		t.Errorf("write after Forget not re-rooted: %v", err)
	}
}

// TestLocOutlivesForget: a Loc keeps its own directory, so a removal
// (which empties the cache) between Locate and CreateTemp cannot pull it
// away.
func TestLocOutlivesForget(t *testing.T) {
	r, dir, _ := attackRoot(t)
	if err := r.WriteFile("/a/b/warm", nil, 0o644); err != nil { // caches /a/b/
		t.Fatal(err)
	}
	at, err := r.Locate("/a/b/f")
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	if err := r.Remove("/a/b/warm"); err != nil { // Forget
		t.Fatal(err)
	}
	if _, ok, err := at.Lstat(); ok || err != nil {
		t.Fatalf("Lstat = %v, %v; want absent", ok, err)
	}
	tmp, err := at.CreateTemp(0o644, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("x"))
	if err := tmp.Commit(0o644, -1, -1); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a/b/f")); err != nil || string(b) != "x" {
		t.Errorf("a/b/f = %q, %v", b, err)
	}
}

// TestCommitNew: the rename refuses to replace anything, of any kind,
// leaves what is there as it was, and removes the temporary file.
func TestCommitNew(t *testing.T) {
	r, dir, outside := attackRoot(t)
	os.MkdirAll(filepath.Join(dir, "n/dir"), 0o755)
	os.WriteFile(filepath.Join(dir, "n/file"), []byte("old"), 0o644)
	os.Symlink("/abs-out", filepath.Join(dir, "n/link"))
	for _, p := range []string{"/n/dir", "/n/file", "/n/link", "/n/dangling-to-nowhere"} {
		if p == "/n/dangling-to-nowhere" {
			os.Symlink("/does/not/exist", filepath.Join(dir, "n/dangling-to-nowhere"))
		}
		tmp, err := r.CreateTemp(p)
		if err != nil {
			t.Fatal(err)
		}
		tmp.Write([]byte("new"))
		if err := tmp.CommitNew(0o644, -1, -1); !errors.Is(err, fs.ErrExist) {
			t.Errorf("CommitNew over %s = %v, want ErrExist", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n/file")); string(b) != "old" {
		t.Errorf("n/file = %q, want it kept", b)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "n"))
	if len(entries) != 4 {
		t.Errorf("n holds %d entries, want the 4 it had: a temporary file is left", len(entries))
	}
	tmp, err := r.CreateTemp("/n/fresh")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write([]byte("new"))
	if err := tmp.CommitNew(0o600, -1, -1); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "n/fresh")); err != nil || fi.Mode() != 0o600 {
		t.Errorf("n/fresh = %v, %v; want mode 0600", fi, err)
	}
	assertOutsideUntouched(t, outside)
}

// TestCommitOwnerAfterDirectoryChown: a file committed with flint's own
// ids must get them even when its directory, already cached, was given
// another group and made setgid in between (the cache knows a directory's
// group to skip needless chowns: Lchown must drop what it knew).
func TestCommitOwnerAfterDirectoryChown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory another group")
	}
	r, dir, _ := attackRoot(t)
	if err := r.WriteFile("/g/first", nil, 0o644); err != nil { // caches /g/
		t.Fatal(err)
	}
	if err := r.Lchown("/g", -1, 4242); err != nil {
		t.Fatal(err)
	}
	if err := r.Chmod("/g", 0o755|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	tmp, err := r.CreateTemp("/g/second")
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(0o644, os.Geteuid(), os.Getegid()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "g/second"))
	if err != nil {
		t.Fatal(err)
	}
	if gid := fi.Sys().(*syscall.Stat_t).Gid; int(gid) != os.Getegid() {
		t.Errorf("g/second gid = %d, want %d (the setgid directory's group stuck)", gid, os.Getegid())
	}
}

// TestCommitModeExact: a file gets exactly the mode it is committed with,
// however the umask or a directory's default ACL would have created it
// (files are created with their final mode when the kernel keeps it, to
// spare a chmod), special bits included after a chown.
func TestCommitModeExact(t *testing.T) {
	old := syscall.Umask(0o077)
	r, dir, _ := attackRoot(t) // opened under umask 077
	syscall.Umask(old)
	commit := func(p string, mode fs.FileMode, uid, gid int) {
		t.Helper()
		at, err := r.Locate(p)
		if err != nil {
			t.Fatal(err)
		}
		tmp, err := at.CreateTemp(mode, uid, gid)
		if err != nil {
			t.Fatal(err)
		}
		tmp.Write([]byte("x"))
		if err := tmp.Commit(mode, uid, gid); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s mode = %v, want %v", p, fi.Mode(), mode)
		}
	}
	if err := r.WriteFile("/u/warm", nil, 0o644); err != nil { // caches /u/
		t.Fatal(err)
	}
	commit("/u/a", 0o644, -1, -1)
	commit("/u/b", 0o600, -1, -1)
	commit("/u/c", 0o755|fs.ModeSetuid, os.Geteuid(), os.Getegid())
	if os.Geteuid() == 0 {
		commit("/u/d", 0o750|fs.ModeSetgid, 4242, 4242)
	}
	// A default ACL giving others nothing: new files would lose o+r.
	os.Mkdir(filepath.Join(dir, "acl"), 0o755)
	acl := []byte{2, 0, 0, 0, // posix_acl_xattr version 2; then tag, perm, id
		1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, // user:: rw-
		4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff, // group:: r--
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff} // other:: ---
	if err := setDefaultACL(filepath.Join(dir, "acl"), acl); err != nil {
		t.Logf("no default ACL on this filesystem (%v): that case is not checked", err)
		return
	}
	// Under umask 022 a file wanting 0644 is created 0644: unless the
	// directory has a default ACL.
	old = syscall.Umask(0o022)
	r2, err := Open(dir)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	r = r2
	if err := r.WriteFile("/acl/warm", nil, 0o644); err != nil { // caches /acl/
		t.Fatal(err)
	}
	commit("/acl/a", 0o644, -1, -1)
	commit("/u/e", 0o644, -1, -1)
}

// TestMakeDirKeepsAnotherCallersMode: a walk that finds a directory
// missing and then loses the race to make it (another goroutine's walk,
// or MkdirAll giving it 0700) must open that directory as it is, not
// chmod it 0755; one it makes itself is 0755 whatever the umask.
func TestMakeDirKeepsAnotherCallersMode(t *testing.T) {
	dir := t.TempDir()
	top, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(top)
	if err := os.Mkdir(filepath.Join(dir, "theirs"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tt := range []struct {
		name string
		want fs.FileMode
	}{
		{"theirs", 0o700},
		{"mine", 0o755},
	} {
		fd, err := makeDir(top, tt.name)
		if err != nil {
			t.Fatalf("makeDir(%s) = %v", tt.name, err)
		}
		unix.Close(fd)
		if fi, err := os.Stat(filepath.Join(dir, tt.name)); err != nil || fi.Mode().Perm() != tt.want {
			t.Errorf("after makeDir(%s): %v, %v; want mode %v", tt.name, fi.Mode(), err, tt.want)
		}
	}
	// A file or a symlink that appeared is not a directory to open (the
	// kernel says ENOTDIR or ELOOP for a symlink under O_NOFOLLOW and
	// O_DIRECTORY: the walk reads the link on either).
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	os.Symlink("/", filepath.Join(dir, "link"))
	for _, name := range []string{"file", "link"} {
		if _, err := makeDir(top, name); !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
			t.Errorf("makeDir(%s) = %v, want ENOTDIR or ELOOP", name, err)
		}
	}
}

// TestCommitOverSymlinkForgetsCache: once a file is renamed over a
// symlink to a directory, paths through that symlink, cached when it was
// one, lead nowhere: the file has nothing below it. Both ways to commit,
// with and without a Loc's Lstat.
func TestCommitOverSymlinkForgetsCache(t *testing.T) {
	for _, viaLoc := range []bool{false, true} {
		r, dir, _ := attackRoot(t)
		if err := os.Symlink("/real", filepath.Join(dir, "lnk")); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile("/lnk/a", nil, 0o644); err != nil { // caches /lnk/
			t.Fatal(err)
		}
		if viaLoc {
			at, err := r.Locate("/lnk")
			if err != nil {
				t.Fatal(err)
			}
			if info, ok, err := at.Lstat(); err != nil || !ok || info.Mode&fs.ModeSymlink == 0 {
				t.Fatalf("Loc(/lnk).Lstat() = %v, %v, %v; want a symlink", info, ok, err)
			}
			tmp, err := at.CreateTemp(0o644, -1, -1)
			if err != nil {
				t.Fatal(err)
			}
			if err := tmp.Commit(0o644, -1, -1); err != nil {
				t.Fatal(err)
			}
		} else if err := r.WriteFile("/lnk", []byte("a file now"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile("/lnk/b", nil, 0o644); !errors.Is(err, ErrNotDir) {
			t.Errorf("via Loc %v: WriteFile(/lnk/b) with /lnk a file = %v, want ErrNotDir", viaLoc, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "real/b")); err == nil {
			t.Errorf("via Loc %v: /lnk/b landed in /real/b through the symlink /lnk no longer is", viaLoc)
		}
	}
}

// TestResolveClimbsOutOfMissing: a symlink whose target goes through a
// missing directory and back up ("missing/../link") resolves to where a
// write then lands: the walk that writes makes the missing directory and
// climbs out of it, into links that Resolve must follow too.
func TestResolveClimbsOutOfMissing(t *testing.T) {
	tests := []struct {
		link, target string
		in, want     string
	}{
		{"/dd", "missing/../../real-link", "/dd/x", "/real/x"},
		{"/real/m", "nope/nope2/../../../etc", "/real/m/x", "/x"},
		{"/real/n", "nope/../../up/real", "/real/n/sub/x", "/real/sub/x"},
		{"/real/o", "nope/deeper/..", "/real/o/x", "/real/nope/x"},
	}
	for _, tt := range tests {
		r, dir, outside := attackRoot(t)
		if err := os.Symlink(tt.target, filepath.Join(dir, tt.link)); err != nil {
			t.Fatal(err)
		}
		if got, err := r.Resolve(tt.in); err != nil || got != tt.want {
			t.Errorf("Resolve(%s) with %s -> %s = %q, %v; want %q", tt.in, tt.link, tt.target, got, err, tt.want)
		}
		at, err := r.Locate(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if at.Real() != tt.want {
			t.Errorf("Locate(%s).Real() = %q, want %q", tt.in, at.Real(), tt.want)
		}
		tmp, err := at.CreateTemp(0o644, -1, -1)
		if err != nil {
			t.Fatalf("Locate(%s).CreateTemp() = %v", tt.in, err)
		}
		if tmp.Real != tt.want {
			t.Errorf("CreateTemp(%s).Real = %q, want %q", tt.in, tmp.Real, tt.want)
		}
		if err := tmp.Commit(0o644, -1, -1); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, tt.want)); err != nil {
			t.Errorf("write to %s: nothing at %s: %v", tt.in, tt.want, err)
		}
		assertOutsideUntouched(t, outside)
	}
}
