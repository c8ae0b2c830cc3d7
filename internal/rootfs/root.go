//go:build unix

package rootfs

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// MaxSymlinks bounds the symlinks one resolution follows: Linux's own
// limit (MAXSYMLINKS, path_resolution(7)).
const MaxSymlinks = 40

// Root is a directory treated as / for every path given to it. Paths are
// absolute inside the root ("/etc/hosts"). A Root is safe for concurrent
// use: it holds only the root's descriptor.
type Root struct {
	dir string
	fd  int
	// uid and gid are flint's effective ids: a new file's owner, unless
	// its directory gives it its group (setgid, or the grpid mount option).
	uid, gid int
	// umask is the process's file mode creation mask, -1 if unknown.
	umask int
	// dirs caches the directories walks ended in: a path's parent, as
	// written, to its descriptor and real path. Writing thousands of
	// files into a few directories then costs no walk per file. Only
	// removals and a file renamed over a symlink can change where a
	// cached path leads (a new node cannot: a cached walk went through
	// existing nodes only, and a file cannot replace a directory), so
	// Remove, RemoveAll and such a Commit empty it, and so does Forget,
	// for changes made outside the Root (useradd, systemctl).
	mu   sync.Mutex
	dirs map[string]*dirRef
}

// dirRef is an open directory shared by the cache and the locs walked
// through it: its descriptor is closed when the last of them lets go, so
// emptying the cache never closes a directory someone is writing in.
type dirRef struct {
	fd   int
	real string
	// gid is the directory's group when it was opened; -1 if unknown.
	// Lchown drops the cached directory it changes.
	gid int
	// acl says the directory may have a default ACL, which replaces the
	// umask for new files.
	acl  bool
	refs atomic.Int32
}

func (d *dirRef) hold() *dirRef {
	d.refs.Add(1)
	return d
}

func (d *dirRef) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// maxCachedDirs bounds the descriptors the cache holds.
const maxCachedDirs = 256

// Forget empties the directory cache: call it after something outside
// the Root changed the tree.
func (r *Root) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.dirs {
		d.release()
	}
	r.dirs = nil
}

// forgetReal drops the cached directories whose real path is real.
func (r *Root) forgetReal(real string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, d := range r.dirs {
		if d.real == real {
			delete(r.dirs, k)
			d.release()
		}
	}
}

// Open opens dir as a Root. Close releases it.
func Open(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening root %s: %w", dir, err)
	}
	return &Root{dir: path.Clean(dir), fd: fd, uid: unix.Geteuid(), gid: unix.Getegid(), umask: readUmask()}, nil
}

// Close releases the root's descriptor and the cached directories.
func (r *Root) Close() error {
	r.Forget()
	return unix.Close(r.fd)
}

// Dir is the root's directory on the host.
func (r *Root) Dir() string { return r.dir }

// HostPath is where the real path real (as Resolve returns it) lies on the
// host, for tools run outside (setfiles) and for messages.
func (r *Root) HostPath(real string) string {
	if real == "/" {
		return r.dir
	}
	return strings.TrimSuffix(r.dir, "/") + real
}

// loc is a resolved path: its parent directory, open, and the last
// component's name in it. base is "." for the root itself.
type loc struct {
	parent int
	base   string
	// real is the path inside the root with every symlink but the last
	// component's resolved.
	real string
	// dir, when set, is the cached directory parent belongs to: close
	// lets go of it instead of closing parent.
	dir *dirRef
	// node is what Loc.Lstat found at base, for Commit: whether a
	// rename there replaces a symlink.
	node nodeKind
}

// nodeKind is what a loc knows of the node at its base.
type nodeKind uint8

const (
	nodeUnknown nodeKind = iota // not looked at
	nodeLink                    // a symlink
	nodeOther                   // absent, or anything but a symlink
)

func (l loc) close() {
	if l.dir != nil {
		l.dir.release()
	} else {
		unix.Close(l.parent)
	}
}

// parentGID is the group of l's parent directory, -1 if unknown.
func (l loc) parentGID() int {
	if l.dir == nil {
		return -1
	}
	return l.dir.gid
}

// frame is one open directory of a walk.
type frame struct {
	fd   int
	name string
}

// walk resolves every component of p but the last, following symlinks as
// if the root were /, and returns the last component's parent open. With
// create, missing directories are made 0755.
func (r *Root) walk(p string, create bool) (loc, error) {
	return r.walkMode(p, create, false)
}

// walkMode is walk; with virtual, a missing directory does not end the
// walk: the components below it are kept lexically (nothing below a
// missing directory can be a symlink), until a ".." climbs back above it
// into the real tree, where the walk goes on as walk with create would
// go, having made the missing directories. A walk that ends below a
// missing directory returns loc.parent -1.
func (r *Root) walkMode(p string, create, virtual bool) (loc, error) {
	if !path.IsAbs(p) {
		return loc{}, fmt.Errorf("%s: %w", p, ErrNotRelative)
	}
	p = path.Clean(p)
	cdir, clast := path.Split(p)
	if clast != "" && clast != ".." {
		r.mu.Lock()
		d, ok := r.dirs[cdir]
		if ok {
			d.hold()
		}
		r.mu.Unlock()
		if ok {
			return loc{parent: d.fd, base: clast, real: path.Join(d.real, clast), dir: d}, nil
		}
	}
	if p == "/" {
		fd, err := unix.Dup(r.fd)
		if err != nil {
			return loc{}, err
		}
		return loc{parent: fd, base: ".", real: "/"}, nil
	}
	queue := strings.Split(p[1:], "/")
	stack := []frame{{fd: r.fd}}
	closeAbove := func(n int) {
		for len(stack) > n {
			unix.Close(stack[len(stack)-1].fd)
			stack = stack[:len(stack)-1]
		}
	}
	links := 0
	// missing are the components below the top of the stack that do not
	// exist (virtual only).
	var missing []string
	for len(queue) > 1 {
		c := queue[0]
		queue = queue[1:]
		switch {
		case c == "" || c == ".":
			continue
		case len(missing) > 0 && c == "..":
			missing = missing[:len(missing)-1]
			continue
		case len(missing) > 0:
			missing = append(missing, c)
			continue
		case c == "..":
			if len(stack) > 1 {
				closeAbove(len(stack) - 1)
			}
			continue
		}
		top := stack[len(stack)-1].fd
		fd, err := openDir(top, c)
		if errors.Is(err, unix.ENOENT) && create {
			fd, err = makeDir(top, c)
		}
		if err == nil {
			stack = append(stack, frame{fd: fd, name: c})
			continue
		}
		if virtual && errors.Is(err, unix.ENOENT) {
			missing = append(missing, c)
			continue
		}
		if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
			closeAbove(1)
			return loc{}, fmt.Errorf("%s: %w", realOf(stack, c), err)
		}
		target, lerr := readlinkat(top, c)
		if lerr != nil {
			// Not a symlink: a file where a directory must be.
			closeAbove(1)
			return loc{}, fmt.Errorf("%s: %w", realOf(stack, c), ErrNotDir)
		}
		if links++; links > MaxSymlinks {
			closeAbove(1)
			return loc{}, fmt.Errorf("%s: %w", p, ErrTooManyLinks)
		}
		if strings.HasPrefix(target, "/") {
			closeAbove(1)
		}
		queue = append(strings.Split(target, "/"), queue...)
	}
	last := queue[0]
	top := stack[len(stack)-1]
	real := realOf(stack, "")
	if len(missing) > 0 {
		closeAbove(1)
		return loc{parent: -1, real: path.Join(real, path.Join(missing...), last)}, nil
	}
	if last == ".." || last == "." {
		// Only reachable through symlink targets ending in "." or "..",
		// which the queue never leaves last; kept for safety.
		closeAbove(1)
		return loc{}, fmt.Errorf("%s: %w", p, ErrNotDir)
	}
	fd := top.fd
	if len(stack) == 1 {
		var err error
		if fd, err = unix.Dup(r.fd); err != nil {
			return loc{}, err
		}
	} else {
		stack = stack[:len(stack)-1]
		closeAbove(1)
	}
	l := loc{parent: fd, base: last, real: path.Join(real, last)}
	r.remember(cdir, &l)
	return l, nil
}

// remember caches l's parent as where the directory dir (as written)
// leads, sharing the descriptor: l then holds it through the cache.
func (r *Root) remember(dir string, l *loc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.dirs) >= maxCachedDirs {
		return
	}
	if r.dirs == nil {
		r.dirs = map[string]*dirRef{}
	}
	if _, ok := r.dirs[dir]; ok {
		return
	}
	d := &dirRef{fd: l.parent, real: path.Dir(l.real), gid: -1}
	var st unix.Stat_t
	if unix.Fstat(l.parent, &st) == nil {
		d.gid = int(st.Gid)
	}
	d.acl = mayHaveDefaultACL(l.parent)
	d.refs.Store(2) // the cache's and l's
	r.dirs[dir] = d
	l.dir = d
}

// realOf is the real path of the walk so far, with name appended.
func realOf(stack []frame, name string) string {
	parts := make([]string, 0, len(stack))
	for _, f := range stack[1:] {
		parts = append(parts, f.name)
	}
	if name != "" {
		parts = append(parts, name)
	}
	return "/" + strings.Join(parts, "/")
}

// makeDir makes the directory name in dirfd 0755 and opens it. When
// something appeared there since the walk found nothing (a concurrent
// walk's directory, MkdirAll's with its own mode, a symlink), that is
// opened as it is: only a directory made here is chmodded (mkdirat's mode
// is cut by the umask), never one another caller made with its own mode.
func makeDir(dirfd int, name string) (int, error) {
	err := unix.Mkdirat(dirfd, name, 0o755)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	made := err == nil
	fd, err := openDir(dirfd, name)
	if err != nil {
		return -1, err
	}
	if made {
		if err := unix.Fchmod(fd, 0o755); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func openDir(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

func (r *Root) pathError(op, p string, err error) error {
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// Resolve returns the real path of p inside the root: every symlink of
// its parent components resolved as if the root were /, the last
// component not followed. Missing components are kept as given, so two
// entries of a config that would land on the same node resolve to the
// same string before either exists.
func (r *Root) Resolve(p string) (string, error) {
	l, err := r.walkMode(p, false, true)
	if err != nil {
		return "", err
	}
	if l.parent >= 0 {
		l.close()
	}
	return l.real, nil
}

// Lstat describes the node at p without following its last component.
func (r *Root) Lstat(p string) (Info, error) {
	l, err := r.walk(p, false)
	if err != nil {
		return Info{}, r.pathError("lstat", p, err)
	}
	defer l.close()
	var st unix.Stat_t
	if err := unix.Fstatat(l.parent, l.base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, r.pathError("lstat", p, err)
	}
	return infoOf(&st), nil
}

func infoOf(st *unix.Stat_t) Info {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return Info{Mode: m, UID: int(st.Uid), GID: int(st.Gid), Dev: uint64(st.Dev), Ino: uint64(st.Ino), Nlink: uint64(st.Nlink), Size: int64(st.Size), Ctime: st.Ctim.Nano()}
}

// MkdirAll makes the directory p and its missing parents (parents 0755,
// p itself mode) and says whether p was created. An existing directory is
// kept as it is; an existing node of another kind is ErrNotDir.
func (r *Root) MkdirAll(p string, mode fs.FileMode) (created bool, err error) {
	l, err := r.walk(p, true)
	if err != nil {
		return false, r.pathError("mkdir", p, err)
	}
	defer l.close()
	if l.base == "." {
		return false, nil
	}
	err = unix.Mkdirat(l.parent, l.base, 0o700)
	if errors.Is(err, unix.EEXIST) {
		var st unix.Stat_t
		if err := unix.Fstatat(l.parent, l.base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return false, r.pathError("mkdir", p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false, r.pathError("mkdir", p, ErrNotDir)
		}
		return false, nil
	}
	if err != nil {
		return false, r.pathError("mkdir", p, err)
	}
	fd, err := openDir(l.parent, l.base)
	if err != nil {
		return true, r.pathError("mkdir", p, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, ModeToUnix(mode)); err != nil {
		return true, r.pathError("chmod", p, err)
	}
	return true, nil
}

// Temp is a temporary file beside its target, written first and renamed
// over the target by Commit: a reader of the target sees the old file or
// the whole new one, never a part.
type Temp struct {
	r *Root
	// fd is written with write(2) directly: an *os.File would cost a
	// fcntl and a finalizer for each of thousands of files.
	fd int
	// off is fd's offset: every write goes through Write and Rewind, so
	// Offset needs no lseek(2).
	off int64
	// dir is the target's location: its parent open, its name.
	dir loc
	tmp string
	// mode is the file's mode as created, unknownMode if the kernel may
	// have changed it (a default ACL, an unknown umask).
	mode uint32
	// Real is the target's real path inside the root.
	Real string
	done bool
	// direct says the file was created with no name (Loc.CreateNew):
	// Commit links it to the target's name instead of renaming it, and
	// tmp is the target's name.
	direct bool
	// sum hashes what Write wrote (nil unless Keep was called), unless
	// sumLost: a Rewind to
	// anywhere but the start lost what the hash had seen.
	sum     hash.Hash
	sumLost bool
	// final is the file as Commit left it (Final).
	final    Info
	hasFinal bool
}

// unknownMode is a Temp's mode when it cannot be known without a stat.
const unknownMode = ^uint32(0)

// CreateTemp creates a temporary file (mode 0600, owned by flint's user)
// in the directory of p, making missing parent directories 0755.
func (r *Root) CreateTemp(p string) (*Temp, error) {
	return r.createTemp(p, 0o600, -1, -1)
}

// createTemp walks to p's directory, making missing ones, and creates the
// temporary file there for a file to be committed with mode, uid and gid.
func (r *Root) createTemp(p string, mode fs.FileMode, uid, gid int) (*Temp, error) {
	l, err := r.walk(p, true)
	if err != nil {
		return nil, r.pathError("create", p, err)
	}
	return r.createTempIn(l, p, mode, uid, gid)
}

// createTempIn creates the temporary file in l's parent, which it takes
// over, for a file to be committed with mode, uid and gid.
func (r *Root) createTempIn(l loc, p string, mode fs.FileMode, uid, gid int) (*Temp, error) {
	if l.base == "." {
		l.close()
		return nil, r.pathError("create", p, unix.EISDIR)
	}
	var rnd [6]byte
	for range 100 {
		rand.Read(rnd[:])
		name := "." + l.base + ".flint-" + hex.EncodeToString(rnd[:])
		if len(name) > 255 {
			name = ".flint-" + hex.EncodeToString(rnd[:])
		}
		perm, created := r.initialMode(l, mode, uid, gid)
		fd, err := unix.Openat(l.parent, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			l.close()
			return nil, r.pathError("create", p, err)
		}
		return &Temp{r: r, fd: fd, dir: l, tmp: name, mode: created, Real: l.real}, nil
	}
	l.close()
	return nil, r.pathError("create", p, unix.EEXIST)
}

// initialMode is the mode to create a temporary file with, and the mode
// it then has (unknownMode if the kernel may change it). That is the
// file's final mode, so that Commit needs no chmod, when no chown will
// follow (until then the file is flint's: it is never more open than it
// ends), the mode has no special bits (chown would clear setuid and
// setgid) and the kernel gives exactly what is asked (no umask bits in
// the way, no default ACL). Else it is 0600.
func (r *Root) initialMode(l loc, mode fs.FileMode, uid, gid int) (perm, created uint32) {
	if r.umask < 0 || l.dir == nil || l.dir.acl {
		return 0o600, unknownMode
	}
	perm = 0o600
	if m := ModeToUnix(mode); m&^0o777 == 0 && m&uint32(r.umask) == 0 && !r.needsChown(l, uid, gid) {
		perm = m
	}
	return perm, perm &^ uint32(r.umask)
}

// needsChown says a file created in l's parent does not have the owner
// uid:gid (-1: any) already: it has flint's user, and flint's group or
// its directory's, so when both are the one wanted there is nothing to do.
func (r *Root) needsChown(l loc, uid, gid int) bool {
	return uid >= 0 && uid != r.uid || gid >= 0 && (gid != r.gid || l.parentGID() != gid)
}

// readUmask reads the process's umask from /proc (Linux 4.7), without
// the set-and-restore umask(2) dance that would race with other
// goroutines creating files; -1 when it cannot.
func readUmask() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil && m <= 0o777 {
				return int(m)
			}
		}
	}
	return -1
}

// Commit gives the temporary file its mode and owner (uid or gid -1:
// unchanged) and renames it over the target.
func (t *Temp) Commit(mode fs.FileMode, uid, gid int) error {
	return t.finish(mode, uid, gid, false)
}

// CommitNew is Commit for a target that must not exist: if anything is
// there, the temporary file is removed and the error is fs.ErrExist. The
// check and the rename are one step (renameat2 RENAME_NOREPLACE).
func (t *Temp) CommitNew(mode fs.FileMode, uid, gid int) error {
	return t.finish(mode, uid, gid, true)
}

// CommitNewOrSame is CommitNew that also accepts, in place of nothing, a
// regular file exactly like the temporary one: the same contents (byte
// for byte), type and mode bits, owner and group. Then the temporary file
// is removed, the target left as it is, and same is true. It is how a
// run after a crash recognises what an earlier run wrote; only a target
// that exists costs a comparison.
func (t *Temp) CommitNewOrSame(mode fs.FileMode, uid, gid int) (same bool, err error) {
	if t.done {
		return false, fmt.Errorf("%s: already committed or aborted", t.Real)
	}
	err = t.commit(mode, uid, gid, true)
	if err == nil {
		t.close()
		return false, nil
	}
	if errors.Is(err, fs.ErrExist) {
		var serr error
		if same, serr = t.sameAsTarget(); serr != nil {
			err = serr
		}
	}
	t.Abort()
	if same {
		return true, nil
	}
	return false, err
}

// sameAsTarget compares the committed-to-be temporary file (its mode and
// owner set) with the regular file at its target.
func (t *Temp) sameAsTarget() (bool, error) {
	parent, base := t.dir.parent, t.dir.base
	var mine, theirs unix.Stat_t
	if err := unix.Fstat(t.fd, &mine); err != nil {
		return false, &fs.PathError{Op: "stat", Path: t.Real, Err: err}
	}
	if err := unix.Fstatat(parent, base, &theirs, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, &fs.PathError{Op: "stat", Path: t.Real, Err: err}
	}
	if theirs.Mode&unix.S_IFMT != unix.S_IFREG || theirs.Mode != mine.Mode ||
		theirs.Uid != mine.Uid || theirs.Gid != mine.Gid || theirs.Size != mine.Size {
		return false, nil
	}
	a, err := t.readFd()
	if err != nil {
		return false, &fs.PathError{Op: "open", Path: t.Real, Err: err}
	}
	defer unix.Close(a)
	// O_NONBLOCK: a FIFO swapped in since the stat must not hang us.
	b, err := unix.Openat(parent, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, &fs.PathError{Op: "open", Path: t.Real, Err: err}
	}
	defer unix.Close(b)
	return sameContents(a, b, t.Real)
}

// sameContents compares what two descriptors read, to their ends.
func sameContents(a, b int, name string) (bool, error) {
	const chunk = 64 << 10
	bufA, bufB := make([]byte, chunk), make([]byte, chunk)
	for {
		n, err := readFull(a, bufA)
		if err != nil {
			return false, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		m, err := readFull(b, bufB)
		if err != nil {
			return false, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n != m || !bytes.Equal(bufA[:n], bufB[:m]) {
			return false, nil
		}
		if n < chunk {
			return true, nil
		}
	}
}

// readFull reads into buf until it is full or the file ends.
func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

func (t *Temp) finish(mode fs.FileMode, uid, gid int, noReplace bool) error {
	if t.done {
		return fmt.Errorf("%s: already committed or aborted", t.Real)
	}
	err := t.commit(mode, uid, gid, noReplace)
	if err != nil {
		t.Abort()
		return err
	}
	t.close()
	return nil
}

// close ends a committed file: what it is now (Final), then its
// descriptors.
func (t *Temp) close() {
	if t.sum != nil {
		var st unix.Stat_t
		if unix.Fstat(t.fd, &st) == nil {
			t.final, t.hasFinal = infoOf(&st), true
		}
	}
	t.done = true
	unix.Close(t.fd)
	t.dir.close()
}

// Write appends b to the temporary file.
func (t *Temp) Write(b []byte) (int, error) {
	if t.sum != nil {
		t.sum.Write(b)
	}
	n := 0
	for n < len(b) {
		m, err := unix.Write(t.fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.off += int64(n)
			return n, &fs.PathError{Op: "write", Path: t.Real, Err: err}
		}
		n += m
	}
	t.off += int64(n)
	return n, nil
}

func (t *Temp) commit(mode fs.FileMode, uid, gid int, noReplace bool) error {
	fd := t.fd
	// chown before chmod: chown clears setuid and setgid.
	if t.r.needsChown(t.dir, uid, gid) {
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return &fs.PathError{Op: "chown", Path: t.Real, Err: err}
		}
	}
	if m := ModeToUnix(mode); m != t.mode {
		if err := unix.Fchmod(fd, m); err != nil {
			return &fs.PathError{Op: "chmod", Path: t.Real, Err: err}
		}
	}
	parent, base := t.dir.parent, t.dir.base
	if t.direct {
		// A file with no name gets one; it never replaces anything.
		if err := t.linkNew(); err != nil {
			return &fs.PathError{Op: "link", Path: t.Real, Err: err}
		}
		return nil
	}
	if !noReplace {
		node := t.dir.node
		if node == nodeUnknown {
			node = nodeOther
			var st unix.Stat_t
			if unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				node = nodeLink
			}
		}
		if err := unix.Renameat(parent, t.tmp, parent, base); err != nil {
			return &fs.PathError{Op: "rename", Path: t.Real, Err: err}
		}
		if node == nodeLink {
			// Cached paths through the symlink led where it pointed;
			// now they lead to a file, which has nothing below it.
			t.r.Forget()
		}
		return nil
	}
	err := renameNoReplace(parent, t.tmp, base)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A filesystem, kernel or system without RENAME_NOREPLACE: check,
		// then rename. Nothing else writes the target root meanwhile.
		var st unix.Stat_t
		switch err = unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
		case err == nil:
			err = unix.EEXIST
		case errors.Is(err, unix.ENOENT):
			err = unix.Renameat(parent, t.tmp, parent, base)
		}
	}
	if err != nil {
		return &fs.PathError{Op: "rename", Path: t.Real, Err: err}
	}
	return nil
}

// Abort removes the temporary file; the target is untouched. It is a
// no-op after Commit, so callers can defer it.
func (t *Temp) Abort() {
	if t.done {
		return
	}
	t.done = true
	unix.Close(t.fd)
	if !t.direct {
		// A CreateNew file has no name: closed, it is gone.
		unix.Unlinkat(t.dir.parent, t.tmp, 0)
	}
	t.dir.close()
}

// WriteFile replaces p atomically with data and mode, creating missing
// parent directories 0755. A symlink at p is replaced, never followed.
func (r *Root) WriteFile(p string, data []byte, mode os.FileMode) error {
	t, err := r.CreateTemp(p)
	if err != nil {
		return err
	}
	defer t.Abort()
	if _, err := t.Write(data); err != nil {
		return err
	}
	return t.Commit(mode, -1, -1)
}

// AppendFile appends data to p, creating it with mode (and missing parent
// directories 0755) when absent. A symlink at p is refused (ELOOP).
func (r *Root) AppendFile(p string, data []byte, mode os.FileMode) error {
	f, err := r.OpenAppend(p, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// OpenAppend opens p for appending, creating it with mode when absent.
func (r *Root) OpenAppend(p string, mode os.FileMode) (*os.File, error) {
	l, err := r.walk(p, true)
	if err != nil {
		return nil, r.pathError("open", p, err)
	}
	defer l.close()
	fd, err := unix.Openat(l.parent, l.base, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		fd, err = unix.Openat(l.parent, l.base, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			err = unix.Fchmod(fd, ModeToUnix(mode))
		}
	}
	if err != nil {
		if fd > 0 {
			unix.Close(fd)
		}
		return nil, r.pathError("open", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, r.pathError("open", p, fmt.Errorf("not a regular file"))
	}
	return os.NewFile(uintptr(fd), r.HostPath(l.real)), nil
}

// ReadFile reads p, following symlinks (its last component's too) as if
// the root were /.
func (r *Root) ReadFile(p string) ([]byte, error) {
	orig := p
	for range MaxSymlinks + 1 {
		l, err := r.walk(p, false)
		if err != nil {
			return nil, r.pathError("open", orig, err)
		}
		fd, err := unix.Openat(l.parent, l.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if errors.Is(err, unix.ELOOP) {
			target, lerr := readlinkat(l.parent, l.base)
			l.close()
			if lerr != nil {
				return nil, r.pathError("open", orig, err)
			}
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(l.real), target)
			}
			p = target
			continue
		}
		l.close()
		if err != nil {
			return nil, r.pathError("open", orig, err)
		}
		f := os.NewFile(uintptr(fd), r.HostPath(l.real))
		defer f.Close()
		return io.ReadAll(f)
	}
	return nil, r.pathError("open", orig, ErrTooManyLinks)
}

// Remove removes the node at p (an empty directory included); a missing
// one is no error. A symlink is removed, not followed.
func (r *Root) Remove(p string) error {
	defer r.Forget()
	l, err := r.walk(p, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return r.pathError("remove", p, err)
	}
	defer l.close()
	err = unix.Unlinkat(l.parent, l.base, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		err = unix.Unlinkat(l.parent, l.base, unix.AT_REMOVEDIR)
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return r.pathError("remove", p, err)
	}
	return nil
}

// RemoveAll removes p and, if it is a directory, everything in it,
// never following a symlink; a missing p is no error.
func (r *Root) RemoveAll(p string) error {
	defer r.Forget()
	l, err := r.walk(p, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return r.pathError("remove", p, err)
	}
	defer l.close()
	if l.base == "." {
		return r.pathError("remove", p, unix.EBUSY)
	}
	// Everything is checked before anything is removed: a mount found
	// half way would leave a half-deleted tree.
	parent, err := mountOf(l.parent, "")
	if err != nil {
		return r.pathError("remove", p, err)
	}
	if err := checkNoMounts(l.parent, l.base, l.real, parent); err != nil {
		return r.pathError("remove", p, err)
	}
	if err := removeAllAt(l.parent, l.base); err != nil {
		return r.pathError("remove", p, err)
	}
	return nil
}

// mountKey says which mount a node lies on.
type mountKey struct {
	id    uint64 // the mount id, when hasID
	hasID bool
	dev   uint64
	dir   bool // the node is a directory
}

// sameMount says whether a node with key k lies on the same mount as its
// directory, with key parent.
func (k mountKey) sameMount(parent mountKey) bool {
	if k.hasID && parent.hasID {
		return k.id == parent.id
	}
	return k.dev == parent.dev
}

// checkNoMounts says whether name in the directory parent (whose mount is
// parentKey), or anything under it, is a mount point; real is name's real
// path, for the error. A missing node is no error: there is nothing to
// remove.
func checkNoMounts(parent int, name, real string, parentKey mountKey) error {
	k, err := mountOf(parent, name)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err == nil && !k.sameMount(parentKey) {
		err = ErrMountPoint
	}
	if err == nil && k.dir {
		// An error below names its own path.
		var below error
		err = eachIn(parent, name, func(dir int, entry string) error {
			below = checkNoMounts(dir, entry, path.Join(real, entry), k)
			return below
		})
		if below != nil {
			return below
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", real, err)
	}
	return nil
}

// eachIn calls fn with every entry of the directory name in parent, the
// directory open as dir, and stops at its first error.
func eachIn(parent int, name string, fn func(dir int, entry string) error) error {
	fd, err := openDir(parent, name)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := fn(fd, n); err != nil {
			return err
		}
	}
	return nil
}

func removeAllAt(parent int, name string) error {
	err := unix.Unlinkat(parent, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	if eerr := eachIn(parent, name, removeAllAt); eerr != nil {
		if errors.Is(eerr, unix.ENOTDIR) || errors.Is(eerr, unix.ELOOP) {
			// Not a directory after all: EPERM was unlink's own answer (an
			// immutable file, a sticky directory), the reason to report.
			return err
		}
		return eerr
	}
	err = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// Symlink creates p as a symlink to target, written literally; missing
// parent directories are made 0755.
func (r *Root) Symlink(target, p string) error {
	l, err := r.walk(p, true)
	if err != nil {
		return r.pathError("symlink", p, err)
	}
	defer l.close()
	if err := unix.Symlinkat(target, l.parent, l.base); err != nil {
		return r.pathError("symlink", p, err)
	}
	return nil
}

// Readlink returns the literal target of the symlink at p.
func (r *Root) Readlink(p string) (string, error) {
	l, err := r.walk(p, false)
	if err != nil {
		return "", r.pathError("readlink", p, err)
	}
	defer l.close()
	t, err := readlinkat(l.parent, l.base)
	if err != nil {
		return "", r.pathError("readlink", p, err)
	}
	return t, nil
}

// Link creates p as a hard link to target (both inside the root; target's
// last component not followed, so a link to a symlink links the symlink).
func (r *Root) Link(target, p string) error {
	t, err := r.walk(target, false)
	if err != nil {
		return r.pathError("link", target, err)
	}
	defer t.close()
	l, err := r.walk(p, true)
	if err != nil {
		return r.pathError("link", p, err)
	}
	defer l.close()
	if err := unix.Linkat(t.parent, t.base, l.parent, l.base, 0); err != nil {
		return r.pathError("link", p, err)
	}
	return nil
}

// Lchown sets the owner of p (uid or gid -1: unchanged), not following a
// symlink at p.
func (r *Root) Lchown(p string, uid, gid int) error {
	l, err := r.walk(p, false)
	if err != nil {
		return r.pathError("chown", p, err)
	}
	defer l.close()
	if err := unix.Fchownat(l.parent, l.base, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return r.pathError("chown", p, err)
	}
	// A cached directory knows its group: this may have changed it.
	r.forgetReal(l.real)
	return nil
}

// Chmod sets the mode of p, setuid, setgid and sticky included. A symlink
// at p is not followed: its mode means nothing, so it is an error.
func (r *Root) Chmod(p string, mode fs.FileMode) error {
	l, err := r.walk(p, false)
	if err != nil {
		return r.pathError("chmod", p, err)
	}
	defer l.close()
	// fchmodat2(2) (Linux 6.6) changes the node without opening it, so
	// a socket, a device without a driver or a file flint may not read
	// is no harder than a file; AT_SYMLINK_NOFOLLOW makes it refuse a
	// symlink (EOPNOTSUPP), which is also what it says where it is
	// missing: then the node is opened and changed through fchmod.
	err = unix.Fchmodat(l.parent, l.base, ModeToUnix(mode), unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) {
		if err != nil {
			return r.pathError("chmod", p, err)
		}
		return nil
	}
	// O_NONBLOCK|O_NOCTTY: opening a FIFO or a tty must not block or
	// take a terminal; O_NOFOLLOW: never chmod a symlink's target.
	fd, err := unix.Openat(l.parent, l.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r.pathError("chmod", p, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, ModeToUnix(mode)); err != nil {
		return r.pathError("chmod", p, err)
	}
	return nil
}

// Loc is a path resolved once, its parent directory held open, for the
// several operations a caller makes on one node (the files stage: the
// duplicate check, lstat, the temporary file) without walking the path
// each time.
type Loc struct {
	r    *Root
	path string
	l    loc
}

// Locate resolves p as Resolve does and keeps its parent open until
// Close. When a parent directory is missing, the Loc still knows p's real
// path, Lstat says it does not exist, and CreateTemp makes the parents.
func (r *Root) Locate(p string) (*Loc, error) {
	l, err := r.walkMode(p, false, true)
	if err != nil {
		return nil, r.pathError("resolve", p, err)
	}
	return &Loc{r: r, path: p, l: l}, nil
}

// Real is the node's real path inside the root.
func (l *Loc) Real() string { return l.l.real }

// Close releases the parent directory.
func (l *Loc) Close() {
	if l.l.parent >= 0 {
		l.l.close()
		l.l.parent = -1
	}
}

// Lstat describes the node without following it; ok is false when it
// does not exist.
func (l *Loc) Lstat() (info Info, ok bool, err error) {
	if l.l.parent < 0 {
		return Info{}, false, nil
	}
	var st unix.Stat_t
	err = unix.Fstatat(l.l.parent, l.l.base, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		l.l.node = nodeOther
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, l.r.pathError("lstat", l.path, err)
	}
	l.l.node = nodeOther
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		l.l.node = nodeLink
	}
	return infoOf(&st), true, nil
}

// CreateTemp is Root.CreateTemp for the located path, for a file to be
// committed with mode, uid and gid: when the kernel can create it that
// way, Commit has nothing to change. The temporary file takes the Loc's
// directory over: the Loc is closed after it.
func (l *Loc) CreateTemp(mode fs.FileMode, uid, gid int) (*Temp, error) {
	if l.l.parent < 0 {
		return l.r.createTemp(l.path, mode, uid, gid)
	}
	dir := l.l
	l.l.parent = -1
	return l.r.createTempIn(dir, l.path, mode, uid, gid)
}

// CreateNew creates the file for the located path with no name
// (O_TMPFILE, in the directory it goes to), for a file to be committed
// with mode, uid and gid: Commit gives it its mode and owner and then its
// name (linkat, which never replaces: something there is fs.ErrExist, as
// for CommitNew), so a reader of the target sees nothing or the whole
// file, and a process killed before finds nothing, there being no name
// to leave behind. No temporary name and no rename: on ext4 a named
// temporary file and its rename (a search and an insertion in the
// directory each) are about a third of what writing a small file costs.
// Where the directory's filesystem makes no unnamed file (EOPNOTSUPP:
// vfat, exfat, NFS before 4.2, 9p; an error the named file would meet
// too is reported by it), the file is a named temporary file as
// CreateTemp makes, committed the same way, and Direct is false. The file
// takes the Loc's directory over.
func (l *Loc) CreateNew(mode fs.FileMode, uid, gid int) (*Temp, error) {
	if l.l.parent < 0 {
		// Missing parents: make them, as CreateTemp would.
		dir, err := l.r.walk(l.path, true)
		if err != nil {
			return nil, l.r.pathError("create", l.path, err)
		}
		l.l = dir
	}
	if l.l.base == "." {
		return nil, l.r.pathError("create", l.path, unix.EISDIR)
	}
	perm, created := l.r.initialMode(l.l, mode, uid, gid)
	// O_RDWR: CommitNewOrSame reads it back to compare.
	fd, err := openUnnamed(l.l.parent, perm)
	dir := l.l
	l.l.parent = -1
	if err != nil {
		return l.r.createTempIn(dir, l.path, mode, uid, gid)
	}
	return &Temp{r: l.r, fd: fd, dir: dir, tmp: dir.base, mode: created, Real: dir.real, direct: true}, nil
}

// readFd is a descriptor that reads the temporary file from its start,
// for the caller to close: a CreateNew file has no name to open, so its
// own descriptor is duplicated (sharing its offset, which the reader
// leaves at the end when it reads to it).
func (t *Temp) readFd() (int, error) {
	if !t.direct {
		return unix.Openat(t.dir.parent, t.tmp, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	fd, err := unix.Dup(t.fd)
	if err == nil {
		if _, err = unix.Seek(fd, 0, io.SeekStart); err != nil {
			unix.Close(fd)
		}
	}
	return fd, err
}

// Direct says the file was made with no name (CreateNew): it has no
// rename to record, and appears at its name whole or not at all.
func (t *Temp) Direct() bool { return t.direct }

// Keep asks for Final: from now on Write hashes what it writes, and
// Commit keeps the file's Info. Called before the first Write; without
// it a Temp costs neither the hash nor the stat.
func (t *Temp) Keep() {
	if t.sum == nil {
		t.sum = sha256.New()
	}
}

// Final is the file as Commit left it, and the SHA-256 of what Write
// wrote; ok is false without Keep, before Commit, or when the hash is
// unknown (a Rewind to the middle of the file).
func (t *Temp) Final() (info Info, sum [sha256.Size]byte, ok bool) {
	if t.sum == nil || !t.hasFinal || t.sumLost {
		return Info{}, sum, false
	}
	t.sum.Sum(sum[:0])
	return t.final, sum, true
}

// Offset is where the next write to the temporary file goes
// (resource.Rewinder).
func (t *Temp) Offset() (int64, error) {
	return t.off, nil
}

// Rewind discards everything written from off on; the next write goes
// there (resource.Rewinder: a fetch broken midway starts over).
func (t *Temp) Rewind(off int64) error {
	if err := unix.Ftruncate(t.fd, off); err != nil {
		return &fs.PathError{Op: "truncate", Path: t.Real, Err: err}
	}
	if _, err := unix.Seek(t.fd, off, io.SeekStart); err != nil {
		return &fs.PathError{Op: "seek", Path: t.Real, Err: err}
	}
	t.off = off
	if off == 0 && t.sum != nil {
		t.sum.Reset()
	} else if off != 0 {
		t.sumLost = true
	}
	return nil
}

// Sync makes what was written to the temporary file durable (fsync(2)):
// for a file whose rename must not land on the disk before its contents.
func (t *Temp) Sync() error {
	if err := unix.Fsync(t.fd); err != nil {
		return &fs.PathError{Op: "fsync", Path: t.Real, Err: err}
	}
	return nil
}

// Sum256 is the SHA-256 of what was written to the temporary file.
func (t *Temp) Sum256() ([sha256.Size]byte, error) {
	fd, err := t.readFd()
	if err != nil {
		return [sha256.Size]byte{}, &fs.PathError{Op: "open", Path: t.Real, Err: err}
	}
	f := os.NewFile(uintptr(fd), t.Real)
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [sha256.Size]byte{}, err
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}

// ID is the temporary file's FileID.
func (t *Temp) ID() (FileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(t.fd, &st); err != nil {
		return FileID{}, &fs.PathError{Op: "stat", Path: t.Real, Err: err}
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil
}

// tempSuffix is what CreateTemp appends to "."+<target's name>: ".flint-"
// and 12 lower-case hex digits.
const (
	tempMark   = ".flint-"
	tempRandom = 12
)

// tempTarget says whether name is one of CreateTemp's temporary files and
// for which target name; long is true for the short form CreateTemp uses
// when the target's name is too long to be part of it.
func tempTarget(name string) (base string, long, ok bool) {
	n := len(name) - tempRandom
	if n < len(tempMark) || name[0] != '.' || name[n-len(tempMark):n] != tempMark {
		return "", false, false
	}
	for _, c := range name[n:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false, false
		}
	}
	if n == len(tempMark) {
		return "", true, true // ".flint-<hex>"
	}
	base = name[1 : n-len(tempMark)]
	return base, false, base != ""
}

// tempTooLong says CreateTemp names the temporary file of a target named
// base in the short form.
func tempTooLong(base string) bool {
	return 1+len(base)+len(tempMark)+tempRandom > 255
}

// RemoveStaleTemps removes from the directory dir the temporary files a
// killed run of flint left beside the targets named in bases, and returns
// their names. Only regular files named exactly as CreateTemp names them
// for one of those targets are removed: anything else in dir stays. A
// missing dir is no error.
func (r *Root) RemoveStaleTemps(dir string, bases []string) ([]string, error) {
	l, err := r.walk(path.Join(dir, "_"), false)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, ErrNotDir) {
		return nil, nil
	}
	if err != nil {
		return nil, r.pathError("open", dir, err)
	}
	defer l.close()
	// A descriptor of its own: a directory's read offset is shared by
	// its duplicates, and the cached one must stay untouched.
	fd, err := unix.Openat(l.parent, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, r.pathError("open", dir, err)
	}
	d := os.NewFile(uintptr(fd), r.HostPath(path.Dir(l.real)))
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, r.pathError("readdir", dir, err)
	}
	want := make(map[string]bool, len(bases))
	anyLong := false
	for _, b := range bases {
		want[b] = true
		anyLong = anyLong || tempTooLong(b)
	}
	var removed []string
	for _, name := range names {
		base, long, ok := tempTarget(name)
		if !ok || long && !anyLong || !long && (!want[base] || tempTooLong(base)) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(l.parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if err := unix.Unlinkat(l.parent, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return removed, r.pathError("remove", path.Join(dir, name), err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}
