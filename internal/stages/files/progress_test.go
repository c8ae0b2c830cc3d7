//go:build unix

package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/rootfs"
)

// errCrash is the stage being killed.
var errCrash = errors.New("killed")

// fakeProgress keeps the records in memory. At its crashAt-th record
// (from 1; 0: never) the stage "is killed": a Pending is stored and then
// fails (killed between the record and the rename), a Done fails unstored
// (killed between the change and its record).
type fakeProgress struct {
	done    map[string]bool
	pending map[string]rootfs.FileID
	calls   int
	crashAt int
}

func newFakeProgress() *fakeProgress {
	return &fakeProgress{done: map[string]bool{}, pending: map[string]rootfs.FileID{}}
}

func (p *fakeProgress) Applied(entry string) (bool, rootfs.FileID) {
	return p.done[entry], p.pending[entry]
}

func (p *fakeProgress) Pending(entry string, id rootfs.FileID) error {
	p.calls++
	p.pending[entry] = id
	if p.calls == p.crashAt {
		return errCrash
	}
	return nil
}

func (p *fakeProgress) Done(entry string) error {
	p.calls++
	if p.calls == p.crashAt {
		return errCrash
	}
	p.done[entry] = true
	delete(p.pending, entry)
	return nil
}

// tree describes every node under dir: kind, mode, contents or target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			desc += " " + string(b)
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// crashConfig has every kind of entry that is not idempotent by itself:
// contents that may not overwrite, an append to an existing file, a
// directory and a symlink replacing what is there, a hard link, preset
// lines.
const crashConfig = `{
	"storage":{
		"directories":[{"path":"/srv/data","overwrite":true,"mode":448}],
		"files":[
			{"path":"/etc/motd","contents":{"source":"data:,hello"}},
			{"path":"/etc/existing","append":[{"source":"data:,%20appended"}]},
			{"path":"/srv/data/remote","contents":{"source":"http://server/remote"}},
			{"path":"/srv/data/more","contents":{"source":"data:,more"},"mode":384}
		],
		"links":[
			{"path":"/etc/link","target":"/etc/motd","overwrite":true},
			{"path":"/etc/hard","target":"/etc/motd","hard":true}
		]
	},
	"systemd":{"units":[{"name":"a.service","contents":"[Service]\nExecStart=/bin/true\n","enabled":true}]}
}`

func crashTarget(t *testing.T) *target {
	tg := newTarget(t)
	tg.write("etc/existing", "kept")
	tg.write("srv/data/old", "removed by overwrite")
	os.Symlink("/elsewhere", tg.path("etc/link"))
	tg.fetch.data["http://server/remote"] = "remote contents"
	return tg
}

// TestRerunAfterCrash kills the stage at each of its progress records in
// turn and runs it again: the second run must succeed and leave exactly
// the tree of a run that was never interrupted, nothing applied twice.
func TestRerunAfterCrash(t *testing.T) {
	clean := crashTarget(t)
	whole := newFakeProgress()
	if err := clean.run(crashConfig, func(d *Deps) { d.Progress = whole }); err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	want := tree(t, clean.dir)
	if want["etc/existing"] != "-rw-r--r-- kept appended" {
		t.Fatalf("uninterrupted run: etc/existing = %q", want["etc/existing"])
	}
	for crash := 1; crash <= whole.calls; crash++ {
		t.Run(fmt.Sprint("killed at record ", crash), func(t *testing.T) {
			tg := crashTarget(t)
			p := newFakeProgress()
			p.crashAt = crash
			if err := tg.run(crashConfig, func(d *Deps) { d.Progress = p }); !errors.Is(err, errCrash) {
				t.Fatalf("first run = %v, want it killed", err)
			}
			p.crashAt = 0
			if err := tg.run(crashConfig, func(d *Deps) { d.Progress = p }); err != nil {
				t.Fatalf("run after the crash = %v", err)
			}
			got := tree(t, tg.dir)
			if !reflect.DeepEqual(got, want) {
				for k := range want {
					if got[k] != want[k] {
						t.Errorf("%s = %q, want %q", k, got[k], want[k])
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s = %q, want nothing", k, got[k])
					}
				}
			}
		})
	}
}

// TestRerunRenameHappened is a crash between the rename of a file that
// may not overwrite and its record: the file is there, and it is the one
// recorded as pending, so the run after it skips it. The runs write as
// `flint apply` does (NoResult), through a temporary file and a rename:
// a first boot makes such a file at its name (TestRerunMadeInPlace).
func TestRerunRenameHappened(t *testing.T) {
	tg := newTarget(t)
	const cfg = `{"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`
	p := newFakeProgress()
	p.crashAt = 2 // the Done after the rename
	if err := tg.run(cfg, func(d *Deps) { d.Progress = p; d.NoResult = true }); !errors.Is(err, errCrash) {
		t.Fatalf("first run = %v, want it killed", err)
	}
	if _, ok := p.pending["file /etc/motd"]; !ok {
		t.Fatalf("no pending record for /etc/motd: %v", p.pending)
	}
	p.crashAt = 0
	if err := tg.run(cfg, func(d *Deps) { d.Progress = p; d.NoResult = true }); err != nil {
		t.Fatalf("run after the crash = %v", err)
	}
	if !p.done["file /etc/motd"] || !strings.Contains(tg.logs.String(), "applied by an earlier run") {
		t.Errorf("the rename was not recognised: done = %v", p.done)
	}

	// Another file where the pending one was to go is not flint's: the
	// entry fails as it would have.
	tg = newTarget(t)
	p = newFakeProgress()
	p.pending["file /etc/motd"] = rootfs.FileID{Dev: 1, Ino: 1}
	tg.write("etc/motd", "the image's")
	if err := tg.run(cfg, func(d *Deps) { d.Progress = p }); !errors.Is(err, ErrExists) {
		t.Errorf("run over a file that is not the pending one = %v, want ErrExists", err)
	}
}

// TestStaleTempsRemoved leaves what a killed run leaves (temporary files
// beside the paths the stage writes) and things that only look like it.
func TestStaleTempsRemoved(t *testing.T) {
	tg := newTarget(t)
	stale := []string{
		"etc/.motd.flint-0123456789ab",
		"etc/systemd/system/.a.service.flint-a1a2a3a4a5a6",
		"etc/..ignition-result.json.flint-00000000000f", // the result file is a dot file
		"home/core/.ssh/authorized_keys.d/.ignition.flint-bbbbbbbbbbbb",
	}
	kept := []string{
		"etc/.other.flint-0123456789ab",       // no entry writes /etc/other
		"var/.motd.flint-0123456789ab",        // a directory the stage does not write to
		"etc/.motd.flint-0123456789ab.rpmnew", // not flint's pattern
		"etc/.motd.flint-0123456789",          // not flint's pattern
	}
	for _, p := range append(stale, kept...) {
		tg.write(p, "partial")
	}
	err := tg.run(`{"passwd":{"users":[{"name":"core","uid":` + itoa(me[0]) + `,"sshAuthorizedKeys":["ssh-ed25519 AAAA"]}]},
		"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hi"}}]},
		"systemd":{"units":[{"name":"a.service","contents":"[Service]\n"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Lstat(tg.path(p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s stays: %v", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(tg.path(p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if !strings.Contains(tg.logs.String(), "temporary files a killed run left") {
		t.Errorf("the removal was not logged")
	}
}

// TestCrypttabRerun runs the LUKS part twice, as a stage run again after
// a crash does: every line is there once.
func TestCrypttabRerun(t *testing.T) {
	tg := newTarget(t)
	const cfg = `{"storage":{"luks":[{"name":"x","device":"/dev/vdb"}]}}`
	for range 2 {
		if err := tg.run(cfg); err != nil {
			t.Fatal(err)
		}
	}
	tg.check(wantFile("etc/crypttab", "x UUID=uuid-of-vdb none luks,x-initrd.attach\n", 0o600))
}

// powerLossConfig is crashConfig and an empty file.
const powerLossConfig = `{
	"storage":{
		"directories":[{"path":"/srv/data","overwrite":true,"mode":448}],
		"files":[
			{"path":"/etc/motd","contents":{"source":"data:,hello"}},
			{"path":"/etc/existing","append":[{"source":"data:,%20appended"}]},
			{"path":"/srv/data/remote","contents":{"source":"http://server/remote"}},
			{"path":"/srv/data/more","contents":{"source":"data:,more"},"mode":384},
			{"path":"/etc/empty","contents":{"source":"data:,"}}
		],
		"links":[
			{"path":"/etc/link","target":"/etc/motd","overwrite":true},
			{"path":"/etc/hard","target":"/etc/motd","hard":true}
		]
	},
	"systemd":{"units":[{"name":"a.service","contents":"[Service]\nExecStart=/bin/true\n","enabled":true}]}
}`

// TestRerunAfterPowerLoss kills the stage at each of its progress records
// in turn, then runs it again with the progress lost, as after a power
// loss (the journal lives in /run): what the lost run wrote is recognised
// by what it is (the same contents, mode and owner; a link to the same
// target; a directory), an append by its record in AppendJournal on the
// root, and the rerun converges on an uninterrupted run's tree.
func TestRerunAfterPowerLoss(t *testing.T) {
	clean := crashTarget(t)
	whole := newFakeProgress()
	if err := clean.run(powerLossConfig, func(d *Deps) { d.Progress = whole }); err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	want := tree(t, clean.dir)
	if want["etc/existing"] != "-rw-r--r-- kept appended" {
		t.Fatalf("uninterrupted run: etc/existing = %q", want["etc/existing"])
	}
	for crash := 1; crash <= whole.calls; crash++ {
		t.Run(fmt.Sprint("lost at record ", crash), func(t *testing.T) {
			tg := crashTarget(t)
			p := newFakeProgress()
			p.crashAt = crash
			if err := tg.run(powerLossConfig, func(d *Deps) { d.Progress = p }); !errors.Is(err, errCrash) {
				t.Fatalf("first run = %v, want it killed", err)
			}
			if err := tg.run(powerLossConfig, func(d *Deps) { d.Progress = newFakeProgress() }); err != nil {
				t.Fatalf("run after the power loss = %v", err)
			}
			got := tree(t, tg.dir)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tree after the rerun = %v\nwant %v", got, want)
			}
		})
	}
}

// TestRerunNotTheSame: a file at the path that is not exactly what the
// entry writes still fails the entry, as before; an empty one (contents
// lost with the power) says how to recover.
func TestRerunNotTheSame(t *testing.T) {
	const cfg = `{"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`
	for _, tt := range []struct {
		name, contents string
		mode           os.FileMode
		want           string
	}{
		{"other contents", "hellO", 0o644, "not what it holds"},
		{"other mode", "hello", 0o600, "not what it holds"},
		{"empty", "", 0o644, "it is empty: if a boot that lost power wrote it, remove it, or set overwrite: true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			tg.write("etc/motd", tt.contents)
			os.Chmod(tg.path("etc/motd"), tt.mode)
			err := tg.run(cfg)
			if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run over %s = %v, want ErrExists saying %q", tt.name, err, tt.want)
			}
			if got := tg.read("etc/motd"); got != tt.contents {
				t.Errorf("etc/motd = %q, want it untouched (%q)", got, tt.contents)
			}
		})
	}
	// A remote file too: fetched, compared, refused.
	tg := newTarget(t)
	tg.fetch.data["http://server/f"] = "new"
	tg.write("etc/f", "old")
	err := tg.run(`{"storage":{"files":[{"path":"/etc/f","contents":{"source":"http://server/f"}}]}}`)
	if !errors.Is(err, ErrExists) || tg.read("etc/f") != "old" {
		t.Errorf("remote file over another = %v, %q; want ErrExists and the file kept", err, tg.read("etc/f"))
	}
}

// TestRerunAfterPowerLossRelabels: a file the lost boot wrote (exactly
// the entry's) and an append it recorded are relabelled by the rerun,
// since the lost boot's relabel never ran.
func TestRerunAfterPowerLossRelabels(t *testing.T) {
	tg := newTarget(t)
	tg.write("etc/selinux/config", "SELINUX=enforcing\nSELINUXTYPE=targeted\n")
	const cfg = `{"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}},
		{"path":"/etc/existing","append":[{"source":"data:,more"}]}]}}`
	tg.write("etc/existing", "kept")
	if err := tg.run(cfg); err != nil {
		t.Fatal(err)
	}
	// The power loss: the run's progress is lost, its append record
	// kept (it is removed only at the end of a run: put it back).
	sum := sha256.Sum256([]byte("keptmore"))
	tg.write("etc/.flint-files-appends", `{"file":"/etc/existing","sha256":"`+hex.EncodeToString(sum[:])+`"}`+"\n")
	tg.runner.relabels = nil
	if err := tg.run(cfg); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if got := tg.read("etc/existing"); got != "keptmore" {
		t.Errorf("etc/existing = %q, want the fragment once", got)
	}
	for _, p := range []string{"/etc/motd", "/etc/existing"} {
		if !contains(tg.runner.relabels, tg.dir+p) {
			t.Errorf("relabelled %q, want %s among them", tg.runner.relabels, p)
		}
	}
	if _, err := os.Lstat(tg.path("etc/.flint-files-appends")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the append record stays after the run: %v", err)
	}
}

// TestRerunMadeInPlace: a first boot makes a file with contents from the
// config with no name and links it to its own, with no Pending record
// (there is no rename). A run killed before its Done record finds the file
// there on the rerun, sees it is exactly what the entry writes, and keeps
// it; an empty file there (as a power loss leaves one) is still refused
// with the way out.
func TestRerunMadeInPlace(t *testing.T) {
	const cfg = `{"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`
	tg := newTarget(t)
	p := newFakeProgress()
	p.crashAt = 1 // the Done after the file was made
	if err := tg.run(cfg, func(d *Deps) { d.Progress = p }); !errors.Is(err, errCrash) {
		t.Fatalf("first run = %v, want it killed", err)
	}
	if len(p.pending) != 0 {
		t.Errorf("pending records = %v, want none: the file was linked to its name, not renamed", p.pending)
	}
	if got := tg.read("etc/motd"); got != "hello" {
		t.Fatalf("etc/motd after the kill = %q, want hello", got)
	}
	p.crashAt = 0
	if err := tg.run(cfg, func(d *Deps) { d.Progress = p }); err != nil {
		t.Fatalf("run after the kill = %v", err)
	}
	if !p.done["file /etc/motd"] || !strings.Contains(tg.logs.String(), "already there: the same contents") {
		t.Errorf("the file was not recognised: done = %v", p.done)
	}

	tg = newTarget(t)
	tg.write("etc/motd", "")
	if err := tg.run(cfg); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "it is empty") {
		t.Errorf("run over an empty file = %v, want ErrExists saying it is empty", err)
	}
}

// TestMadeInPlaceOnlyOnFirstBoot: Run makes a new file with no name,
// `flint apply` (NoResult) through a temporary file and a rename, whose
// Pending record names the temporary file's inode, now the file's.
func TestMadeInPlaceOnlyOnFirstBoot(t *testing.T) {
	const cfg = `{"storage":{"files":[{"path":"/etc/motd","mode":384,"contents":{"source":"data:,hello"}}]}}`
	for _, apply := range []bool{false, true} {
		tg := newTarget(t)
		p := newFakeProgress()
		if err := tg.run(cfg, func(d *Deps) { d.Progress = p; d.NoResult = apply }); err != nil {
			t.Fatalf("run (NoResult %v) = %v", apply, err)
		}
		fi, err := os.Stat(tg.path("etc/motd"))
		if err != nil || fi.Mode().Perm() != 0o600 || tg.read("etc/motd") != "hello" {
			t.Fatalf("etc/motd (NoResult %v) = %v, %v, want hello 0600", apply, fi, err)
		}
		if _, pend := p.pending["file /etc/motd"]; pend || p.calls != map[bool]int{false: 1, true: 2}[apply] {
			t.Errorf("records (NoResult %v) = %d calls, pending %v; want %d", apply, p.calls, p.pending, map[bool]int{false: 1, true: 2}[apply])
		}
	}
}

// TestMadeInPlaceRemovedOnFailure: contents that fail their check leave
// nothing at the path of a file a first boot made with no name.
func TestMadeInPlaceRemovedOnFailure(t *testing.T) {
	tg := newTarget(t)
	const src = "data:;base64,aGVsbG8="
	tg.fetch.data[src] = "hello"
	tg.fetch.fail[src] = true
	err := tg.run(`{"storage":{"files":[{"path":"/etc/motd","contents":{"source":"` + src + `"}}]}}`)
	if err == nil || !strings.Contains(err.Error(), "hash mismatch") {
		t.Fatalf("run = %v, want the hash mismatch", err)
	}
	if _, err := os.Lstat(tg.path("etc/motd")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("etc/motd after the failure: %v, want it absent", err)
	}
}
