package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/rootfs"
)

// Defaults for new nodes without a mode (the spec's, coreos/ignition
// docs/configuration-v3_6.md).
const (
	defaultFileMode fs.FileMode = 0o644
	defaultDirMode  fs.FileMode = 0o755
)

type kind int

const (
	kindDir kind = iota
	kindFile
	kindSymlink
	kindHardLink
)

// entry is one node of the config, pointing into it (the structs are
// large: sorting thousands of copies cost more than writing the files).
type entry struct {
	kind  kind
	depth int // of the cleaned path, for ordered
	file  *config.File
	dir   *config.Directory
	link  *config.Link
}

func (e entry) node() config.Node {
	switch e.kind {
	case kindFile:
		return e.file.Node
	case kindDir:
		return e.dir.Node
	}
	return e.link.Node
}

func (e entry) what() string {
	switch e.kind {
	case kindFile:
		return "file " + e.file.Path
	case kindDir:
		return "directory " + e.dir.Path
	case kindSymlink:
		return "symlink " + e.link.Path
	}
	return "hard link " + e.link.Path
}

// ordered lists the config's nodes in the order they are made (Ignition's
// order, getOrderedCreationList in coreos/ignition
// internal/exec/stages/files/filesystemEntries.go): directories, files and
// symlinks by depth, shallowest first, so parents exist before children and
// a symlink exists before what is written through it; hard links last, since
// their targets may be any of the others.
func ordered(st config.Storage) []entry {
	list := make([]entry, 0, len(st.Directories)+len(st.Files)+len(st.Links))
	var hard []entry
	for i := range st.Directories {
		list = append(list, entry{kind: kindDir, dir: &st.Directories[i]})
	}
	for i := range st.Files {
		list = append(list, entry{kind: kindFile, file: &st.Files[i]})
	}
	for i := range st.Links {
		l := &st.Links[i]
		if l.Hard != nil && *l.Hard {
			hard = append(hard, entry{kind: kindHardLink, link: l})
		} else {
			list = append(list, entry{kind: kindSymlink, link: l})
		}
	}
	for i := range list {
		list[i].depth = strings.Count(path.Clean(list[i].node().Path), "/")
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].depth < list[j].depth })
	return append(list, hard...)
}

// nodes makes the config's directories, files and links.
func (s *stage) nodes(ctx context.Context) error {
	entries := ordered(s.Config.Storage)
	if len(entries) == 0 {
		return nil
	}
	q := &queue{s: s}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		// Stop the fetches still running before removing their files.
		cancel()
		q.abort()
	}()
	seen := map[string]string{}
	for _, e := range entries {
		p := e.node().Path
		var pre *prefetched
		if e.kind == kindFile {
			// Its turn: a prefetch not started yet never starts.
			pre = s.prefetch.take(e.file)
		}
		if e.kind == kindHardLink {
			// A hard link's target may be a file still being fetched.
			if err := q.flush(); err != nil {
				return err
			}
		}
		at, err := s.root.Locate(p)
		if err != nil {
			return fmt.Errorf("%s: %w", e.what(), err)
		}
		if q.under(at.Real()) {
			// Something still being fetched lies at, under or above
			// this path: let it land first, in the config's order,
			// then resolve again (a rename may have replaced a
			// symlink on the way).
			at.Close()
			if err := q.flush(); err != nil {
				return err
			}
			if at, err = s.root.Locate(p); err != nil {
				return fmt.Errorf("%s: %w", e.what(), err)
			}
		}
		real := at.Real()
		if other, dup := seen[real]; dup {
			at.Close()
			return fmt.Errorf("%s: %w %s (both are %s after following symlinks)", e.what(), ErrSamePath, other, real)
		}
		seen[real] = p
		if skip, err := s.appliedBefore(e, at); skip || err != nil {
			at.Close()
			if err != nil {
				return err
			}
			continue
		}
		if s.selinux {
			s.scheduleRelabel(p)
		}
		switch e.kind {
		case kindFile:
			err = s.file(ctx, q, *e.file, pre, at)
		case kindDir:
			err = s.dir(*e.dir)
		default:
			err = s.link(e)
		}
		at.Close()
		if err == nil && e.kind != kindFile {
			err = s.recordDone(e.what())
		}
		if err != nil {
			return err
		}
		if err := q.commitReady(); err != nil {
			return err
		}
	}
	return q.flush()
}

// scheduleRelabel records the first missing component of p, which is
// what its creation adds (setfiles recurses from there).
func (s *stage) scheduleRelabel(p string) {
	p = path.Clean(p)
	prefix := ""
	for _, c := range strings.Split(p[1:], "/") {
		prefix += "/" + c
		if _, err := s.root.Lstat(prefix); errors.Is(err, fs.ErrNotExist) {
			if real, err := s.root.Resolve(prefix); err == nil {
				s.relabel = append(s.relabel, real)
			}
			return
		}
	}
}

// lstat describes p; ok is false when it does not exist.
func (s *stage) lstat(p string) (rootfs.Info, bool, error) {
	info, err := s.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return info, false, nil
	}
	if err != nil {
		return info, false, err
	}
	return info, true, nil
}

// owner is who owns a node: the config's user and group (by id, or by
// name in the target's databases), else the existing node's, else flint's
// own (root in the initramfs; Ignition's 0:0).
func (s *stage) owner(n config.Node, existing *rootfs.Info) (uid, gid int, err error) {
	uid, gid = s.uid, s.gid
	if existing != nil {
		uid, gid = existing.UID, existing.GID
	}
	switch {
	case n.User.ID != nil:
		uid = *n.User.ID
	case n.User.Name != nil && *n.User.Name != "":
		u, err := s.db.User(*n.User.Name)
		if err != nil {
			return 0, 0, err
		}
		uid = u.UID
	}
	switch {
	case n.Group.ID != nil:
		gid = *n.Group.ID
	case n.Group.Name != nil && *n.Group.Name != "":
		g, err := s.db.Group(*n.Group.Name)
		if err != nil {
			return 0, 0, err
		}
		gid = g.GID
	}
	return uid, gid, nil
}

// chown sets p's owner when it differs from what it has.
func (s *stage) chown(p string, uid, gid int) error {
	info, err := s.root.Lstat(p)
	if err != nil {
		return err
	}
	if info.UID == uid && info.GID == gid {
		return nil
	}
	return s.root.Lchown(p, uid, gid)
}

// fileJob is a file being written: its temporary file, filled (perhaps
// concurrently), then committed in the config's order.
type fileJob struct {
	f        config.File
	real     string
	mode     fs.FileMode
	uid, gid int
	tmp      *rootfs.Temp
	// fresh says the target must not exist: nothing was there when the
	// file was queued, as far as anyone looked (file).
	fresh bool
	// replace says the target exists as something the rename cannot
	// replace (a directory) and overwrite allows removing it.
	replace bool
	// forget says the rename replaces a symlink: the resolver's cached
	// directories may have gone through it.
	forget bool
	// journal says the file appends to what is there: it is recorded
	// in AppendJournal before its rename.
	journal bool
	done    chan struct{}
	err     error
	op      *oplog.Op
}

func isRemote(r config.Resource) bool {
	if r.Source == nil || *r.Source == "" {
		return false
	}
	// Only the scheme is compared: lowering a whole data URL copies it.
	s := *r.Source
	return len(s) < 5 || !strings.EqualFold(s[:5], "data:")
}

// file makes one file (as coreos/ignition internal/exec/util/file.go does):
// contents into a temporary file beside the target, verified, then renamed
// with the final mode and owner.
func (s *stage) file(ctx context.Context, q *queue, f config.File, pre *prefetched, at *rootfs.Loc) error {
	what := "file " + f.Path
	// A failure before the write starts is one [failed] line.
	fail := func(err error) error { return s.quick("files", "writing "+what).Fail(err) }
	overwrite := f.Overwrite != nil && *f.Overwrite
	hasSource := f.Contents.Source != nil
	remote := isRemote(f.Contents)
	for _, a := range f.Append {
		remote = remote || isRemote(a)
	}
	// New contents from the config may not land on anything: the rename
	// itself refuses to replace (CommitNew), so there is no lstat first.
	// A fetch could take long, so that waits for no check.
	fresh := !overwrite && hasSource && !remote
	journal := journalled(f)
	if journal {
		applied, err := s.appendApplied(f)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", what, err))
		}
		if applied {
			s.quick("files", what+": applied by an earlier run of this stage (recorded in "+AppendJournal+")").Finish()
			s.relabelEarlier(f.Path)
			return s.recordDone(what)
		}
	}
	var info rootfs.Info
	var exists bool
	if !fresh {
		var err error
		if info, exists, err = at.Lstat(); err != nil {
			return fail(fmt.Errorf("%s: %w", what, err))
		}
	}
	var there *rootfs.Info
	if exists {
		there = &info
	}
	// existing is a file that stays: its mode and owner are the defaults.
	var existing *rootfs.Info
	decision := DecideFile(f, there)
	switch decision {
	case DecideMatch:
		// Refused unless it is exactly what the entry writes, which
		// commit compares once the contents are here: an earlier run
		// of the stage lost with its progress (a power loss during the
		// first boot) wrote it.
		fresh = true
	case DecideRefuse:
		return fail(existsError(what, info, hasSource))
	case DecideKeep, DecideAppend:
		existing = &info
	}
	mode := defaultFileMode
	switch {
	case f.Mode != nil:
		mode = rootfs.ModeFromUnix(*f.Mode)
	case existing != nil:
		mode = existing.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	uid, gid, err := s.owner(f.Node, existing)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", what, err))
	}
	// A file the image hard-links elsewhere (an OSTree object, a binary
	// under two names) is not changed in place, which would change every
	// name of it: it is replaced by a copy with the new mode and owner,
	// as an append would. Unless the config itself links to it: then
	// the names share the inode by the config's own wish.
	copyShared := existing != nil && len(f.Append) == 0 && existing.Nlink > 1 && !s.hardLinkedByConfig(f.Path)
	if existing != nil && len(f.Append) == 0 && !copyShared {
		// Nothing to write: only the mode and owner the config gives.
		op := s.quick("files", what+": keeping its contents, setting mode and owner")
		if f.Mode != nil {
			if err := s.root.Chmod(f.Path, mode); err != nil {
				return op.Fail(fmt.Errorf("%s: %w", what, err))
			}
		}
		if err := s.chown(f.Path, uid, gid); err != nil {
			return op.Fail(fmt.Errorf("%s: %w", what, err))
		}
		op.Finish(ownerAttrs(mode, uid, gid)...)
		return s.recordDone(what)
	}
	j := &fileJob{f: f, mode: mode, uid: uid, gid: gid, fresh: fresh, journal: journal, replace: decision == DecideReplace && !info.Mode.IsRegular(), done: make(chan struct{})}
	// Renaming over a symlink changes where paths through it lead.
	j.forget = exists && info.Mode&fs.ModeSymlink != 0
	// Behind a slow fetch, the files after it wait with their temporary
	// files open: bound them, and the descriptors they hold.
	if err := q.room(); err != nil {
		return err
	}
	// A fetch can take long: [started] says what is waited on. Contents
	// in the config are written at once: one line says it is done.
	switch {
	case remote:
		j.op = s.op("files", "writing "+what)
	case copyShared:
		j.op = s.quick("files", what+": replacing it with a copy to set mode and owner: the image links it under other names too")
	default:
		j.op = s.quick("files", "writing "+what)
	}
	if s.inPlace && fresh && !exists {
		// A first boot's root, nothing known there, contents from
		// the config written at once: the file is made with no name
		// and linked to its own, no temporary name and no rename
		// (rootfs.Loc.CreateNew). Something there after all is
		// compared with it as with a temporary file (commit). On a
		// filesystem without O_TMPFILE, CreateNew makes a named
		// temporary file (not Direct).
		j.tmp, err = at.CreateNew(mode, uid, gid)
	} else {
		j.tmp, err = at.CreateTemp(mode, uid, gid)
	}
	if err != nil {
		close(j.done)
		return j.op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	j.real = j.tmp.Real
	if s.written != nil {
		// The manifest takes the file's hash as it is written
		// (remember).
		j.tmp.Keep()
	}
	if existing != nil {
		// Appending to an existing file: the temporary file starts as
		// a copy, so a failed fragment leaves the file as it was.
		if err := s.copyExisting(f.Path, j.tmp); err != nil {
			j.tmp.Abort()
			close(j.done)
			return j.op.Fail(fmt.Errorf("%s: %w", what, err))
		}
	}
	if !remote {
		j.fill(ctx, s.Fetcher)
		q.jobs = append(q.jobs, j)
		return nil
	}
	if pre != nil {
		// Fetched, or being fetched, while the shadow tools ran
		// (prefetch.go): the slot is the prefetch's.
		q.jobs = append(q.jobs, j)
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			j.fillPrefetched(ctx, pre, s.slots, s.Fetcher)
		}()
		return nil
	}
	release, err := s.slots.acquire(ctx, j.f)
	if err != nil {
		j.tmp.Abort()
		close(j.done)
		return err
	}
	q.jobs = append(q.jobs, j)
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		defer release()
		j.fill(ctx, s.Fetcher)
	}()
	return nil
}

// hardLinkedByConfig says whether a hard link of the config has p as its
// target (written as the config writes paths: the validator requires them
// absolute and clean).
func (s *stage) hardLinkedByConfig(p string) bool {
	for _, l := range s.Config.Storage.Links {
		if l.Hard != nil && *l.Hard && l.Target != nil && path.Join("/", *l.Target) == path.Clean(p) {
			return true
		}
	}
	return false
}

// fill fetches the contents and the fragments into the temporary file.
func (j *fileJob) fill(ctx context.Context, f Fetcher) {
	defer close(j.done)
	j.fillFrom(ctx, f)
}

// fillFrom is fill without the signal that the job is done.
func (j *fileJob) fillFrom(ctx context.Context, f Fetcher) {
	if j.f.Contents.Source != nil {
		if err := f.Fetch(ctx, j.f.Contents, j.tmp); err != nil {
			j.err = fmt.Errorf("file %s: contents: %w", j.f.Path, err)
			return
		}
	}
	j.fillAppends(ctx, f)
}

// fillAppends fetches the fragments into the temporary file.
func (j *fileJob) fillAppends(ctx context.Context, f Fetcher) {
	for i, a := range j.f.Append {
		if err := f.Fetch(ctx, a, j.tmp); err != nil {
			j.err = fmt.Errorf("file %s: append[%d]: %w", j.f.Path, i, err)
			return
		}
	}
}

// existsError is why an existing node stops a file that may not
// overwrite it: nil when it is a regular file to append to or keep.
func existsError(what string, info rootfs.Info, hasSource bool) error {
	if !info.Mode.IsRegular() {
		return fmt.Errorf("%s: %w (it is %s)", what, ErrExists, describe(info.Mode))
	}
	if hasSource && info.Size == 0 {
		// The likely story: an earlier boot wrote it, and lost its
		// contents and the stage's progress (in /run) to a power
		// failure before the stage synced the filesystem.
		return fmt.Errorf("%s: %w and contents are given (it is empty: if a boot that lost power wrote it, "+
			"remove it, or set overwrite: true on the entry, and boot again)", what, ErrExists)
	}
	if hasSource {
		return fmt.Errorf("%s: %w and contents are given, not what it holds (contents, mode or owner differ)", what, ErrExists)
	}
	return nil
}

func (s *stage) copyExisting(p string, w io.Writer) error {
	data, err := s.root.ReadFile(p)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// commit renames a filled file into place.
func (s *stage) commit(j *fileJob) error {
	if j.err != nil {
		j.tmp.Abort()
		return j.op.Fail(j.err)
	}
	if j.replace {
		if err := s.root.RemoveAll(j.f.Path); err != nil {
			j.tmp.Abort()
			return j.op.Fail(fmt.Errorf("file %s: %w", j.f.Path, err))
		}
	}
	if j.journal {
		if err := s.recordAppend(j); err != nil {
			j.tmp.Abort()
			return j.op.Fail(fmt.Errorf("file %s: %w", j.f.Path, err))
		}
	}
	if !j.tmp.Direct() {
		// A file made with no name has no rename to record: it
		// appears whole or not at all, and a run after a crash that
		// finds it compares it with what the entry writes, as it
		// does any file already there.
		if err := s.recordPending("file "+j.f.Path, j.tmp); err != nil {
			j.tmp.Abort()
			return j.op.Fail(err)
		}
	}
	var err error
	if j.fresh {
		// Something already at the path is refused, unless it is
		// exactly what this entry writes.
		var same bool
		if same, err = j.tmp.CommitNewOrSame(j.mode, j.uid, j.gid); same {
			j.op.Finish(append(ownerAttrs(j.mode, j.uid, j.gid), "state", "already there: the same contents, mode and owner")...)
			s.relabelEarlier(j.f.Path)
			return s.recordDone("file " + j.f.Path)
		}
	} else {
		err = j.tmp.Commit(j.mode, j.uid, j.gid)
	}
	if err != nil {
		if j.fresh && errors.Is(err, fs.ErrExist) {
			if info, lerr := s.root.Lstat(j.f.Path); lerr == nil {
				return j.op.Fail(existsError("file "+j.f.Path, info, true))
			}
		}
		return j.op.Fail(fmt.Errorf("file %s: %w", j.f.Path, err))
	}
	if j.forget {
		s.root.Forget()
	}
	s.remember(j.f.Path, j.tmp)
	if n, err := j.tmp.Offset(); err == nil {
		s.flush.wrote(n)
	}
	j.op.Finish(ownerAttrs(j.mode, j.uid, j.gid)...)
	return s.recordDone("file " + j.f.Path)
}

// ownerAttrs are the attributes of a node's [finished] line: its mode, as
// the config writes it, and owner.
func ownerAttrs(mode fs.FileMode, uid, gid int) []any {
	return []any{"mode", unixMode(mode), "uid", uid, "gid", gid}
}

// unixMode writes a mode in octal as the config gives it (0644, 1777).
func unixMode(m fs.FileMode) string {
	return fmt.Sprintf("%04o", rootfs.ModeToUnix(m))
}

// queue holds the files being written, in the config's order: their
// contents arrive concurrently, they are renamed into place in order.
type queue struct {
	s    *stage
	wg   sync.WaitGroup
	jobs []*fileJob
}

// fetchSlots bound the fetches in flight: Parallel in all, PerHost from
// each server. The nodes' fetches and the prefetch share them.
type fetchSlots struct {
	all     chan struct{}
	perHost int
	mu      sync.Mutex
	hosts   map[string]chan struct{}
}

func newFetchSlots(parallel, perHost int) *fetchSlots {
	return &fetchSlots{all: make(chan struct{}, parallel), perHost: perHost, hosts: map[string]chan struct{}{}}
}

// host returns the semaphore of the server f's first remote source names
// (scheme and host, which holds the port: one HTTP connection pool per
// host and port). Sources that do not parse, or name no host, share one.
func (sl *fetchSlots) host(f config.File) chan struct{} {
	r := f.Contents
	for i := 0; !isRemote(r) && i < len(f.Append); i++ {
		r = f.Append[i]
	}
	key := ""
	if isRemote(r) {
		if u, err := url.Parse(*r.Source); err == nil {
			key = strings.ToLower(u.Scheme + "://" + u.Host)
		}
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sem, ok := sl.hosts[key]
	if !ok {
		sem = make(chan struct{}, sl.perHost)
		sl.hosts[key] = sem
	}
	return sem
}

// acquire takes f's server's slot, then one of all, and returns what gives
// them back.
func (sl *fetchSlots) acquire(ctx context.Context, f config.File) (release func(), err error) {
	host := sl.host(f)
	select {
	case host <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case sl.all <- struct{}{}:
	case <-ctx.Done():
		<-host
		return nil, ctx.Err()
	}
	return func() { <-sl.all; <-host }, nil
}

// under says some queued file lies at, under or above real: the entry
// at real must wait for it.
func (q *queue) under(real string) bool {
	for _, j := range q.jobs {
		if j.real == real || strings.HasPrefix(j.real, strings.TrimSuffix(real, "/")+"/") ||
			strings.HasPrefix(real, j.real+"/") {
			return true
		}
	}
	return false
}

// commitReady commits the files at the head of the queue whose contents
// have arrived.
func (q *queue) commitReady() error {
	for len(q.jobs) > 0 {
		j := q.jobs[0]
		select {
		case <-j.done:
		default:
			return nil
		}
		q.jobs = q.jobs[1:]
		if err := q.s.commit(j); err != nil {
			return err
		}
	}
	return nil
}

// maxQueued bounds the files waiting to be renamed, each holding two
// descriptors (its temporary file and its directory).
const maxQueued = 256

// room commits from the head of the queue, waiting for its contents if
// need be, until a file can be added.
func (q *queue) room() error { return q.drain(maxQueued - 1) }

// flush waits for every queued file and commits them in order.
func (q *queue) flush() error { return q.drain(0) }

// drain commits from the head of the queue, waiting for each file's
// contents, until at most n files are left.
func (q *queue) drain(n int) error {
	for len(q.jobs) > n {
		j := q.jobs[0]
		<-j.done
		q.jobs = q.jobs[1:]
		if err := q.s.commit(j); err != nil {
			return err
		}
	}
	return nil
}

// abort waits for the fetches still running and removes every temporary
// file left: after a failure nothing partial stays in the root.
func (q *queue) abort() {
	q.wg.Wait()
	for _, j := range q.jobs {
		<-j.done
		j.tmp.Abort()
	}
	q.jobs = nil
}

// dir makes one directory: missing ones 0755 unless the config gives a
// mode; an existing one only gets the mode and owner the config gives.
func (s *stage) dir(d config.Directory) error {
	what := "directory " + d.Path
	op := s.quick("files", "creating "+what)
	info, exists, err := s.lstat(d.Path)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	var there *rootfs.Info
	if exists {
		there = &info
	}
	switch DecideDirectory(d, there) {
	case DecideReplace:
		// The spec: overwrite deletes whatever is there, an existing
		// directory and its contents included.
		if err := s.root.RemoveAll(d.Path); err != nil {
			return op.Fail(fmt.Errorf("%s: %w", what, err))
		}
		exists = false
	case DecideRefuse:
		return op.Fail(fmt.Errorf("%s: %w (it is %s)", what, ErrExists, describe(info.Mode)))
	}
	mode := defaultDirMode
	if d.Mode != nil {
		mode = rootfs.ModeFromUnix(*d.Mode)
	}
	created, err := s.root.MkdirAll(d.Path, mode)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	if !created && d.Mode != nil {
		if err := s.root.Chmod(d.Path, mode); err != nil {
			return op.Fail(fmt.Errorf("%s: %w", what, err))
		}
	}
	var existing *rootfs.Info
	if exists {
		existing = &info
	}
	uid, gid, err := s.owner(d.Node, existing)
	if err == nil {
		err = s.chown(d.Path, uid, gid)
	}
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	if exists && d.Mode == nil {
		// Kept as it was.
		mode = info.Mode
	}
	op.Finish(ownerAttrs(mode, uid, gid)...)
	return nil
}

// link makes one symbolic or hard link. An existing link must match: a
// symlink with the same target (then it is left as it is, owner included,
// as Ignition does), a hard link to the same inode.
func (s *stage) link(e entry) error {
	l := *e.link
	what := e.what()
	target := ""
	if l.Target != nil {
		target = *l.Target
	}
	op := s.quick("files", "creating "+what+" to "+target)
	fail := func(err error) error { return op.Fail(fmt.Errorf("%s: %w", what, err)) }
	info, exists, err := s.lstat(l.Path)
	if err != nil {
		return fail(err)
	}
	var there *rootfs.Info
	if exists {
		there = &info
	}
	switch DecideLink(l, there) {
	case DecideReplace:
		if err := s.root.RemoveAll(l.Path); err != nil {
			return fail(err)
		}
		exists = false
	case DecideRefuse:
		return fail(fmt.Errorf("%w (it is %s)", ErrExists, describe(info.Mode)))
	}
	hard := e.kind == kindHardLink
	if exists {
		// DecideMatch: the same link must be there.
		if hard {
			t, err := s.root.Lstat(target)
			if err != nil {
				return fail(fmt.Errorf("target %s: %w", target, err))
			}
			if t.Dev != info.Dev || t.Ino != info.Ino {
				return fail(fmt.Errorf("%w: %s is not a hard link to %s", ErrLinkMismatch, l.Path, target))
			}
		} else {
			got, err := s.root.Readlink(l.Path)
			if err != nil {
				return fail(err)
			}
			if path.Clean(got) != path.Clean(target) {
				return fail(fmt.Errorf("%w: it points to %s, not %s", ErrLinkMismatch, got, target))
			}
			op.Finish("state", "already there")
			return nil
		}
	} else if hard {
		if err := s.root.Link(target, l.Path); err != nil {
			return fail(err)
		}
	} else if err := s.root.Symlink(target, l.Path); err != nil {
		return fail(err)
	}
	// A hard link shares its target's inode: only an owner the config
	// gives is applied, never a default that would take the target
	// away from its owner.
	if !hard || l.User != (config.NodeUser{}) || l.Group != (config.NodeGroup{}) {
		var ex *rootfs.Info
		if hard {
			t, err := s.root.Lstat(l.Path)
			if err != nil {
				return fail(err)
			}
			ex = &t
		}
		uid, gid, err := s.owner(l.Node, ex)
		if err == nil {
			err = s.chown(l.Path, uid, gid)
		}
		if err != nil {
			return fail(err)
		}
		op.Finish("uid", uid, "gid", gid)
		return nil
	}
	op.Finish()
	return nil
}

// describe names a node's kind for messages.
func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}
