//go:build unix

package files

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/stages"
)

// TestProgressJournal is the files stage killed midway: the state file
// from before it, the journal it appended to, its last line cut short.
// The next load sees both; the next save folds the journal in.
func TestProgressJournal(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	before := func() stages.State {
		return stages.State{FilesApplied: []string{"directory /srv"}, NotatedDirectories: []string{"/var"}}
	}
	s := before()
	p := newJournal(JournalPath(state), &s)
	if done, _ := p.Applied("directory /srv"); !done {
		t.Errorf("Applied(directory /srv) = false, want the state's record")
	}
	id := rootfs.FileID{Dev: 8, Ino: 42}
	other := rootfs.FileID{Dev: 8, Ino: 43}
	for _, err := range []error{
		p.Done("file /etc/motd"),
		p.Pending("file /etc/hosts", id),
		p.Pending("file /etc/issue", id),
		p.Done("file /etc/issue"),
		p.Pending("file /etc/\"quoted\" <&>", other),
		// Held back until the next Pending line or close: the kill
		// below loses it, and the next run makes the link again.
		p.Done("symlink /etc/localtime"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	p.f.Write([]byte(`{"done":"file /etc/cut`)) // killed mid-line
	p.f.Close()

	// The next load: the state file as it was, the journal folded in.
	s = before()
	if err := FoldJournal(JournalPath(state), &s); err != nil {
		t.Fatal(err)
	}
	want := stages.State{
		NotatedDirectories: []string{"/var"},
		FilesApplied:       []string{"directory /srv", "file /etc/motd", "file /etc/issue"},
		FilesPending:       map[string]rootfs.FileID{"file /etc/hosts": id, `file /etc/"quoted" <&>`: other},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("FoldJournal = %+v, want %+v", s, want)
	}
	// No journal adds nothing.
	s = before()
	if err := FoldJournal(filepath.Join(dir, "none.files"), &s); err != nil || !reflect.DeepEqual(s, before()) {
		t.Errorf("FoldJournal(no journal) = %+v, %v; want the state unchanged", s, err)
	}
}

// TestProgressClose is a stage that ends: close writes the lines held
// back, and the state it fills matches what loading the journal gives.
func TestProgressClose(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "run", "state")
	p := newJournal(JournalPath(state), &stages.State{})
	id := rootfs.FileID{Dev: 1, Ino: 2}
	for _, err := range []error{
		p.Pending("file /etc/hosts", id),
		p.Done("file /etc/hosts"),
		p.Done("directory /srv"),
		p.Pending("file /etc/issue", id),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var closed stages.State
	if err := p.close(&closed); err != nil {
		t.Fatal(err)
	}
	want := stages.State{
		FilesApplied: []string{"directory /srv", "file /etc/hosts"},
		FilesPending: map[string]rootfs.FileID{"file /etc/issue": id},
	}
	if !reflect.DeepEqual(closed, want) {
		t.Errorf("close = %+v, want %+v", closed, want)
	}
	var loaded stages.State
	if err := FoldJournal(JournalPath(state), &loaded); err != nil {
		t.Fatal(err)
	}
	slices.Sort(loaded.FilesApplied)
	if !reflect.DeepEqual(loaded, want) {
		t.Errorf("FoldJournal after close = %+v, want %+v", loaded, want)
	}
}

// TestProgressLines: the journal's lines are what json.Marshal writes
// for a progressRecord, names that JSON escapes included.
func TestProgressLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state"+".files")
	p := newJournal(path, &stages.State{})
	id := rootfs.FileID{Dev: 1<<64 - 1, Ino: 0}
	var want []byte
	for _, entry := range []string{
		"file /etc/motd",
		`file /etc/a"b\c`,
		"file /srv/<&>",
		"file /srv/tab\there",
		"file /srv/caf\u00e9",
		"file /srv/\xff",
		"file /srv/\u2028",
		"file /srv/\x7f",
	} {
		if err := p.Done(entry); err != nil {
			t.Fatal(err)
		}
		if err := p.Pending(entry, id); err != nil {
			t.Fatal(err)
		}
		for _, rec := range []progressRecord{{Done: entry}, {Pending: entry, ID: &id}} {
			line, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			want = append(append(want, line...), '\n')
		}
	}
	if err := p.close(&stages.State{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Errorf("journal = %q, %v; want %q", got, err, want)
	}
}
