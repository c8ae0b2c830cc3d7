//go:build unix

package files

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// want describes a node after the stage.
type want struct {
	path     string
	kind     string // "file", "dir", "symlink", "absent"
	contents string
	mode     fs.FileMode // 0: not checked
	target   string      // symlink
	sameAs   string      // hard link: same inode as
	uid, gid int         // -1: not checked
}

func (tg *target) check(w want) {
	t := tg.t
	t.Helper()
	p := tg.path(w.path)
	fi, err := os.Lstat(p)
	if w.kind == "absent" {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists, want it absent", w.path)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", w.path, err)
		return
	}
	switch w.kind {
	case "file":
		if !fi.Mode().IsRegular() {
			t.Errorf("%s is %v, want a regular file", w.path, fi.Mode())
		} else if got := tg.read(w.path); got != w.contents {
			t.Errorf("%s contents = %q, want %q", w.path, got, w.contents)
		}
	case "dir":
		if !fi.IsDir() {
			t.Errorf("%s is %v, want a directory", w.path, fi.Mode())
		}
	case "symlink":
		got, err := os.Readlink(p)
		if err != nil || got != w.target {
			t.Errorf("%s -> %q, %v, want -> %q", w.path, got, err, w.target)
		}
	}
	if w.mode != 0 && fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != w.mode {
		t.Errorf("%s mode = %v, want %v", w.path, fi.Mode(), w.mode)
	}
	if w.sameAs != "" {
		other, err := os.Lstat(tg.path(w.sameAs))
		if err != nil || !os.SameFile(fi, other) {
			t.Errorf("%s is not a hard link to %s", w.path, w.sameAs)
		}
	}
	st := fi.Sys().(*syscall.Stat_t)
	if w.uid >= 0 && int(st.Uid) != w.uid {
		t.Errorf("%s uid = %d, want %d", w.path, st.Uid, w.uid)
	}
	if w.gid >= 0 && int(st.Gid) != w.gid {
		t.Errorf("%s gid = %d, want %d", w.path, st.Gid, w.gid)
	}
}

// me is the uid and gid the stage gives nodes by default (root in the
// initramfs, whoever runs the tests here).
var me = [2]int{os.Geteuid(), os.Getegid()}

func TestNodes(t *testing.T) {
	u, g := me[0], me[1]
	tests := []struct {
		name    string
		prepare func(tg *target)
		config  string
		wantErr error
		want    []want
	}{
		{name: "files.create", config: `{"storage":{"files":[{"path":"/etc/a/b","contents":{"source":"data:,hello"}}]}}`,
			want: []want{{path: "etc/a/b", kind: "file", contents: "hello", mode: 0o644, uid: u, gid: g}, {path: "etc/a", kind: "dir", mode: 0o755, uid: u, gid: g}}},
		{name: "files.create.empty without source", config: `{"storage":{"files":[{"path":"/e"}]}}`,
			want: []want{{path: "e", kind: "file", mode: 0o644, uid: -1, gid: -1}}},
		{name: "files.customperms", config: `{"storage":{"files":[{"path":"/s","mode":3565,"contents":{"source":"data:,x"}}]}}`,
			want: []want{{path: "s", kind: "file", contents: "x", mode: 0o755 | fs.ModeSetuid | fs.ModeSetgid, uid: -1, gid: -1}}},
		{name: "files.customperms masked before 3.6", config: `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/s","mode":2541,"contents":{"source":"data:,x"}}]}}`,
			want: []want{{path: "s", kind: "file", contents: "x", mode: 0o755, uid: -1, gid: -1}}},
		{name: "default group despite a setgid directory", prepare: func(tg *target) {
			os.Mkdir(tg.path("sg"), 0o755)
			os.Chown(tg.path("sg"), -1, otherGID())
			os.Chmod(tg.path("sg"), 0o755|os.ModeSetgid)
		},
			config: `{"storage":{"files":[{"path":"/sg/f","contents":{"source":"data:,x"}}]}}`,
			want:   []want{{path: "sg/f", kind: "file", contents: "x", uid: u, gid: g}}},
		{name: "files.owner.byid", config: `{"storage":{"files":[{"path":"/o","user":{"id":` + itoa(u) + `},"group":{"id":` + itoa(g) + `}}]}}`,
			want: []want{{path: "o", kind: "file", uid: u, gid: g}}},
		{name: "files.create.overwrite.false", prepare: func(tg *target) { tg.write("x", "old") },
			config: `{"storage":{"files":[{"path":"/x","contents":{"source":"data:,new"}}]}}`, wantErr: ErrExists,
			want: []want{{path: "x", kind: "file", contents: "old", uid: -1, gid: -1}}},
		{name: "files.create.force", prepare: func(tg *target) { tg.write("x", "old") },
			config: `{"storage":{"files":[{"path":"/x","overwrite":true,"contents":{"source":"data:,new"}}]}}`,
			want:   []want{{path: "x", kind: "file", contents: "new", mode: 0o644, uid: -1, gid: -1}}},
		{name: "files.creates.overwrite.false.overdir", prepare: func(tg *target) { os.MkdirAll(tg.path("d/e"), 0o755) },
			config: `{"storage":{"files":[{"path":"/d"}]}}`, wantErr: ErrExists,
			want: []want{{path: "d/e", kind: "dir", uid: -1, gid: -1}}},
		{name: "overwrite replaces a directory", prepare: func(tg *target) { os.MkdirAll(tg.path("d/e"), 0o755) },
			config: `{"storage":{"files":[{"path":"/d","overwrite":true,"contents":{"source":"data:,f"}}]}}`,
			want:   []want{{path: "d", kind: "file", contents: "f", uid: -1, gid: -1}}},
		{name: "existing file without source keeps contents, gets mode", prepare: func(tg *target) { tg.write("k", "kept") },
			config: `{"storage":{"files":[{"path":"/k","mode":384}]}}`,
			want:   []want{{path: "k", kind: "file", contents: "kept", mode: 0o600, uid: -1, gid: -1}}},
		{name: "files.append.existing", prepare: func(tg *target) { tg.write("a", "one\n"); os.Chmod(tg.path("a"), 0o640) },
			config: `{"storage":{"files":[{"path":"/a","append":[{"source":"data:,two%0A"},{"source":"data:,three"}]}]}}`,
			want:   []want{{path: "a", kind: "file", contents: "one\ntwo\nthree", mode: 0o640, uid: -1, gid: -1}}},
		{name: "files.append.nonexistent", config: `{"storage":{"files":[{"path":"/a","append":[{"source":"data:,two"}]}]}}`,
			want: []want{{path: "a", kind: "file", contents: "two", mode: 0o644, uid: -1, gid: -1}}},
		{name: "files.append.withcreate", config: `{"storage":{"files":[{"path":"/a","contents":{"source":"data:,one"},"append":[{"source":"data:,two"}]}]}}`,
			want: []want{{path: "a", kind: "file", contents: "onetwo", uid: -1, gid: -1}}},
		{name: "directories.create", config: `{"storage":{"directories":[{"path":"/x/y"}]}}`,
			want: []want{{path: "x/y", kind: "dir", mode: 0o755, uid: u, gid: g}}},
		{name: "directories.create with special bits", config: `{"storage":{"directories":[{"path":"/tmpish","mode":1023}]}}`,
			want: []want{{path: "tmpish", kind: "dir", mode: 0o777 | fs.ModeSticky, uid: -1, gid: -1}}},
		{name: "directories.match keeps mode", prepare: func(tg *target) { os.Mkdir(tg.path("m"), 0o700); tg.write("m/f", "f") },
			config: `{"storage":{"directories":[{"path":"/m"}]}}`,
			want:   []want{{path: "m", kind: "dir", mode: 0o700, uid: -1, gid: -1}, {path: "m/f", kind: "file", contents: "f", uid: -1, gid: -1}}},
		{name: "directories.match.overwrite empties a directory", prepare: func(tg *target) { tg.write("m/old", "x") },
			config: `{"storage":{"directories":[{"path":"/m","overwrite":true}]}}`,
			want:   []want{{path: "m", kind: "dir", mode: 0o755, uid: -1, gid: -1}, {path: "m/old", kind: "absent"}}},
		{name: "directories.match.overwrite", prepare: func(tg *target) { tg.write("m", "file") },
			config: `{"storage":{"directories":[{"path":"/m","overwrite":true}]}}`,
			want:   []want{{path: "m", kind: "dir", uid: -1, gid: -1}}},
		{name: "directories.create.overwrite.false", prepare: func(tg *target) { tg.write("m", "file") },
			config: `{"storage":{"directories":[{"path":"/m"}]}}`, wantErr: ErrExists},
		{name: "directories.ordering", config: `{"storage":{"files":[{"path":"/p/q/r","contents":{"source":"data:,r"}}],"directories":[{"path":"/p","mode":448}]}}`,
			want: []want{{path: "p", kind: "dir", mode: 0o700, uid: -1, gid: -1}, {path: "p/q/r", kind: "file", contents: "r", uid: -1, gid: -1}}},
		{name: "links.sym.create", config: `{"storage":{"links":[{"path":"/l","target":"/nowhere"}]}}`,
			want: []want{{path: "l", kind: "symlink", target: "/nowhere", uid: u, gid: g}}},
		{name: "links.sym.match", prepare: func(tg *target) { os.Symlink("/t/", tg.path("l")) },
			config: `{"storage":{"links":[{"path":"/l","target":"/t"}]}}`,
			want:   []want{{path: "l", kind: "symlink", target: "/t/", uid: -1, gid: -1}}},
		{name: "links.sym.badmatch", prepare: func(tg *target) { os.Symlink("/other", tg.path("l")) },
			config: `{"storage":{"links":[{"path":"/l","target":"/t"}]}}`, wantErr: ErrLinkMismatch},
		{name: "links.sym.create.force", prepare: func(tg *target) { os.Symlink("/other", tg.path("l")) },
			config: `{"storage":{"links":[{"path":"/l","target":"/t","overwrite":true}]}}`,
			want:   []want{{path: "l", kind: "symlink", target: "/t", uid: -1, gid: -1}}},
		{name: "links.sym.create.overwrite.false", prepare: func(tg *target) { tg.write("l", "f") },
			config: `{"storage":{"links":[{"path":"/l","target":"/t"}]}}`, wantErr: ErrExists},
		{name: "links.sym.overwritelink", prepare: func(tg *target) { os.Symlink("/t", tg.path("l")) },
			config: `{"storage":{"files":[{"path":"/l","contents":{"source":"data:,x"}}]}}`, wantErr: ErrExists},
		{name: "links.sym.writeover", prepare: func(tg *target) { os.Symlink("/real", tg.path("etc/l")) },
			config: `{"storage":{"files":[{"path":"/etc/l/f/g","contents":{"source":"data:,g"}}]}}`,
			want:   []want{{path: "real/f/g", kind: "file", contents: "g", uid: -1, gid: -1}}},
		{name: "links.sym.writeover.broken", prepare: func(tg *target) { os.Symlink("/broken/dir", tg.path("b")) },
			config: `{"storage":{"files":[{"path":"/b/f","contents":{"source":"data:,f"}}]}}`,
			want:   []want{{path: "broken/dir/f", kind: "file", contents: "f", uid: -1, gid: -1}}},
		{name: "links.sym.resovledconflicts", prepare: func(tg *target) { os.Symlink("/b", tg.path("a")) },
			config:  `{"storage":{"files":[{"path":"/a/x"},{"path":"/b/x"}]}}`,
			wantErr: ErrSamePath},
		{name: "links.hard.create", config: `{"storage":{"files":[{"path":"/t","contents":{"source":"data:,t"}}],"links":[{"path":"/h","target":"/t","hard":true}]}}`,
			want: []want{{path: "h", kind: "file", contents: "t", sameAs: "t", uid: -1, gid: -1}}},
		{name: "links.hard.match", prepare: func(tg *target) { tg.write("t", "t"); os.Link(tg.path("t"), tg.path("h")) },
			config: `{"storage":{"links":[{"path":"/h","target":"/t","hard":true}]}}`,
			want:   []want{{path: "h", kind: "file", contents: "t", sameAs: "t", uid: -1, gid: -1}}},
		{name: "links.hard.badmatch", prepare: func(tg *target) { tg.write("t", "t"); tg.write("h", "h") },
			config: `{"storage":{"links":[{"path":"/h","target":"/t","hard":true}]}}`, wantErr: ErrLinkMismatch},
		{name: "links.hard.create.force", prepare: func(tg *target) { tg.write("t", "t"); tg.write("h", "h") },
			config: `{"storage":{"links":[{"path":"/h","target":"/t","hard":true,"overwrite":true}]}}`,
			want:   []want{{path: "h", kind: "file", contents: "t", sameAs: "t", uid: -1, gid: -1}}},
		{name: "links.hard.create.overwrite.false", prepare: func(tg *target) { tg.write("t", "t"); tg.write("h", "h") },
			config: `{"storage":{"links":[{"path":"/h","target":"/t","hard":true}]}}`, wantErr: ErrLinkMismatch},
		{name: "links.hard.deep.create.file", config: `{"storage":{"files":[{"path":"/a/b/c/t","contents":{"source":"data:,t"}}],"links":[{"path":"/h","target":"/a/b/c/t","hard":true}]}}`,
			want: []want{{path: "h", kind: "file", contents: "t", sameAs: "a/b/c/t", uid: -1, gid: -1}}},
		{name: "links.hard.create.tosym", config: `{"storage":{"links":[{"path":"/s","target":"/nowhere"},{"path":"/h","target":"/s","hard":true}]}}`,
			want: []want{{path: "h", kind: "symlink", target: "/nowhere", sameAs: "s", uid: -1, gid: -1}}},
		{name: "escape through a target symlink to /", prepare: func(tg *target) { os.Symlink("/", tg.path("etc/root")) },
			config: `{"storage":{"files":[{"path":"/etc/root/etc/root/x","contents":{"source":"data:,x"}}]}}`,
			want:   []want{{path: "x", kind: "file", contents: "x", uid: -1, gid: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			if tt.prepare != nil {
				tt.prepare(tg)
			}
			err := tg.run(tt.config)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Run = %v, want %v", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Run = %v", err)
			}
			for _, w := range tt.want {
				tg.check(w)
			}
			assertNoTemps(t, tg.dir)
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// otherGID is a group the tests can give a directory: any other than
// the test's own when root, the own one otherwise (then the case checks
// nothing more than the default).
func otherGID() int {
	if os.Geteuid() == 0 {
		return 4242
	}
	return os.Getegid()
}

// assertNoTemps fails if a temporary file of the stage is left anywhere
// in the root.
func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".flint-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestOwnerByName(t *testing.T) {
	tg := newTarget(t)
	err := tg.run(`{"passwd":{"groups":[{"name":"web","gid":` + itoa(me[1]) + `}],"users":[{"name":"www","uid":` + itoa(me[0]) + `}]},
		"storage":{"files":[{"path":"/srv/f","user":{"name":"www"},"group":{"name":"web"}},{"path":"/srv/g","user":{"name":"sys"},"group":{"name":"sys"}}]}}`)
	if os.Geteuid() != 0 {
		// Only root can give /srv/g to sys; the name lookup through
		// /usr/lib is still checked by the error.
		if err == nil || !strings.Contains(err.Error(), "/srv/g") {
			t.Fatalf("Run as non-root = %v, want a chown error on /srv/g", err)
		}
	} else if err != nil {
		t.Fatal(err)
	} else {
		tg.check(want{path: "srv/g", kind: "file", uid: 3, gid: 3})
	}
	tg.check(want{path: "srv/f", kind: "file", uid: me[0], gid: me[1]})

	tg = newTarget(t)
	if err := tg.run(`{"storage":{"files":[{"path":"/f","user":{"name":"nobody"}}]}}`); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("Run with an unknown user = %v, want an error naming it", err)
	}
}

// TestFailedFetchLeavesNothing: a fetch that fails midway (a lost
// connection, a hash mismatch found at the end) leaves neither a partial
// target nor a temporary file, and an existing file untouched.
func TestFailedFetchLeavesNothing(t *testing.T) {
	for _, src := range []string{"http://srv/bad", "http://srv/missing", "data:,"} {
		t.Run(src, func(t *testing.T) {
			tg := newTarget(t)
			tg.fetch.data["http://srv/bad"] = "0123456789"
			tg.fetch.fail["http://srv/bad"] = true
			tg.fetch.data["http://srv/ok"] = "ok"
			tg.write("old", "old contents")
			appendSrc := src
			if src == "data:," {
				appendSrc = "http://srv/bad"
			}
			err := tg.run(`{"storage":{"files":[
				{"path":"/new","contents":{"source":"` + src + `"}},
				{"path":"/old","overwrite":true,"contents":{"source":"http://srv/ok"},"append":[{"source":"` + appendSrc + `"}]}]}}`)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			if src == "data:," {
				tg.check(want{path: "new", kind: "file", contents: "", uid: -1, gid: -1})
			} else {
				tg.check(want{path: "new", kind: "absent"})
			}
			tg.check(want{path: "old", kind: "file", contents: "old contents", uid: -1, gid: -1})
			assertNoTemps(t, tg.dir)
		})
	}
}

// TestParallelFetch: remote contents are fetched concurrently, bounded,
// and renamed in the config's order.
func TestParallelFetch(t *testing.T) {
	tg := newTarget(t)
	// Long enough that the next fetches start while the first sleep,
	// however loaded the machine.
	tg.fetch.delay = 100 * time.Millisecond
	var files []string
	for i := range 24 {
		src := "http://srv/" + itoa(i)
		tg.fetch.data[src] = "body " + itoa(i)
		files = append(files, `{"path":"/d/f`+itoa(i)+`","contents":{"source":"`+src+`"}}`)
	}
	if err := tg.run(`{"storage":{"files":[`+strings.Join(files, ",")+`]}}`, func(d *Deps) { d.Parallel = 4 }); err != nil {
		t.Fatal(err)
	}
	if got := tg.fetch.maxRun.Load(); got < 2 || got > 4 {
		t.Errorf("at most %d fetches ran at once, want several and no more than 4 (the bound)", got)
	}
	for i := range 24 {
		tg.check(want{path: "d/f" + itoa(i), kind: "file", contents: "body " + itoa(i), uid: -1, gid: -1})
	}
	// The renames follow the config's order: the [finished] lines too.
	log := tg.logs.String()
	last := -1
	for i := range 24 {
		at := strings.Index(log, "[finished] writing file /d/f"+itoa(i)+"\"")
		if at < 0 {
			at = strings.Index(log, "[finished] writing file /d/f"+itoa(i)+" ")
		}
		if at < last {
			t.Errorf("file %d was finished before file %d", i, i-1)
		}
		last = at
	}
}

// TestParallelFetchPerHost: no more than PerHost fetches from one server
// run at once, while another server's files are fetched beside them, up
// to Parallel in all.
func TestParallelFetchPerHost(t *testing.T) {
	tg := newTarget(t)
	tg.fetch.delay = 100 * time.Millisecond
	var files []string
	for i := range 24 {
		// The first 12 from one server, then alternating: a bound on
		// all fetches alone would let the first server have them all.
		host := "a"
		if i >= 12 && i%2 == 1 {
			host = "b:8080"
		}
		src := "http://" + host + "/" + itoa(i)
		tg.fetch.data[src] = "body " + itoa(i)
		files = append(files, `{"path":"/d/f`+itoa(i)+`","contents":{"source":"`+src+`"}}`)
	}
	if err := tg.run(`{"storage":{"files":[`+strings.Join(files, ",")+`]}}`, func(d *Deps) { d.Parallel = 5; d.PerHost = 3 }); err != nil {
		t.Fatal(err)
	}
	if got := tg.fetch.maxRun.Load(); got > 5 {
		t.Errorf("%d fetches ran at once, want no more than 5 (Parallel)", got)
	}
	for host, got := range tg.fetch.hostMax {
		if got > 3 {
			t.Errorf("%d fetches from %s ran at once, want no more than 3 (PerHost)", got, host)
		}
	}
	if len(tg.fetch.hostMax) != 2 {
		t.Errorf("fetches by host: %v, want both servers", tg.fetch.hostMax)
	}
	for i := range 24 {
		tg.check(want{path: "d/f" + itoa(i), kind: "file", contents: "body " + itoa(i), uid: -1, gid: -1})
	}
}

// TestQueueBounded: behind one slow fetch, the data-URL files after it
// wait with their temporary files open; there are never more than
// maxQueued of them. The run writes as `flint apply` does (NoResult), so
// that the waiting files have names to count: a first boot makes them
// with none (rootfs.Loc.CreateNew), behind the same bound.
func TestQueueBounded(t *testing.T) {
	tg := newTarget(t)
	tg.fetch.data["http://srv/slow"] = "slow"
	waiting := func() int {
		entries, _ := os.ReadDir(tg.path("d"))
		return len(entries)
	}
	most := 0
	tg.fetch.during = map[string]func(){"http://srv/slow": func() {
		// The slow fetch ends only once the main loop has queued all
		// it may (maxQueued temporary files, the slow one's and the
		// one waiting for room maybe among them), however long a
		// loaded machine takes to make them. Then a queue without a
		// bound would go on queuing, which the grace lets show.
		deadline := time.Now().Add(time.Minute)
		for waiting() < maxQueued && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		most = waiting()
	}}
	files := []string{`{"path":"/d/slow","contents":{"source":"http://srv/slow"}}`}
	for i := range maxQueued + 100 {
		files = append(files, `{"path":"/d/f`+itoa(i)+`","contents":{"source":"data:,`+itoa(i)+`"}}`)
	}
	if err := tg.run(`{"storage":{"files":[`+strings.Join(files, ",")+`]}}`, func(d *Deps) { d.NoResult = true }); err != nil {
		t.Fatal(err)
	}
	if most > maxQueued+1 || most < maxQueued {
		t.Errorf("%d temporary files waited behind the slow fetch, want %d (or one more, waiting for room)", most, maxQueued)
	}
	tg.check(want{path: "d/f" + itoa(maxQueued+99), kind: "file", contents: itoa(maxQueued + 99), uid: -1, gid: -1})
}

// TestLogLines: a node written without a fetch is one [finished] line
// naming its path, mode and owner; a remote file keeps its [started] line;
// a failure is a [failed] line naming the node and the error; contents never
// reach the log.
func TestLogLines(t *testing.T) {
	tg := newTarget(t)
	tg.fetch.data["http://srv/r"] = "remote body"
	err := tg.run(`{"storage":{
		"directories":[{"path":"/d","mode":493}],
		"files":[{"path":"/d/a","mode":420,"contents":{"source":"data:,secret-a"}},
			{"path":"/d/r","contents":{"source":"http://srv/r"}}],
		"links":[{"path":"/d/l","target":"/d/a"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	log := tg.logs.String()
	for _, w := range []string{
		`msg="[finished] creating directory /d" op=files duration=`,
		`msg="[finished] writing file /d/a" op=files duration=`,
		`msg="[started] writing file /d/r" op=files`,
		`msg="[finished] writing file /d/r" op=files duration=`,
		`msg="[finished] creating symlink /d/l to /d/a" op=files duration=`,
	} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %s", w)
		}
	}
	for _, re := range []string{
		`\[finished\] creating directory /d" .* mode=0755 uid=\d+ gid=\d+\n`,
		`\[finished\] writing file /d/a" .* mode=0644 uid=\d+ gid=\d+\n`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("log lacks a line matching %s", re)
		}
	}
	for _, no := range []string{"[started] creating directory /d", "[started] writing file /d/a", "[started] creating symlink", "secret-a", "remote body"} {
		if strings.Contains(log, no) {
			t.Errorf("log has %q", no)
		}
	}

	// Failures: one before the write starts, one of the fetch.
	tg.fetch.fail["http://srv/bad"] = true
	for _, c := range []struct{ config, want string }{
		{`{"storage":{"files":[{"path":"/d/a","contents":{"source":"data:,x"}}]}}`, `msg="[failed] writing file /d/a" op=files duration=`},
		{`{"storage":{"files":[{"path":"/d/f","contents":{"source":"http://srv/bad"}}]}}`, `msg="[failed] writing file /d/f" op=files duration=`},
		{`{"storage":{"directories":[{"path":"/d/a"}]}}`, `msg="[failed] creating directory /d/a" op=files duration=`},
	} {
		tg.logs.Reset()
		if err := tg.run(c.config); err == nil {
			t.Errorf("%s: no error", c.config)
			continue
		}
		if log := tg.logs.String(); !strings.Contains(log, c.want) || !strings.Contains(log, "error=") {
			t.Errorf("%s: log lacks %s with the error", c.config, c.want)
		}
	}
}
