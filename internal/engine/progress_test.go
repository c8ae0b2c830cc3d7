package engine

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/flintboot/flint/internal/rootfs"
)

// TestProgressJournal is the files stage killed midway: the state file
// from before it, the journal it appended to, its last line cut short.
// The next load sees both; the next save folds the journal in.
func TestProgressJournal(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := saveState(state, State{FilesApplied: []string{"directory /srv"}, NotatedDirectories: []string{"/var"}}); err != nil {
		t.Fatal(err)
	}
	s, err := loadState(state)
	if err != nil {
		t.Fatal(err)
	}
	p := newProgress(state+progressSuffix, s)
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

	s, err = loadState(state)
	if err != nil {
		t.Fatal(err)
	}
	want := State{
		NotatedDirectories: []string{"/var"},
		FilesApplied:       []string{"directory /srv", "file /etc/motd", "file /etc/issue"},
		FilesPending:       map[string]rootfs.FileID{"file /etc/hosts": id, `file /etc/"quoted" <&>`: other},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("loadState = %+v, want %+v", s, want)
	}
	if err := saveState(state, s); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state + progressSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the journal stays after the state was saved: %v", err)
	}
	if again, err := loadState(state); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("loadState after saveState = %+v, %v; want %+v", again, err, want)
	}
}

// TestProgressClose is a stage that ends: close writes the lines held
// back, and the state it fills matches what loading the journal gives.
func TestProgressClose(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "run", "state")
	p := newProgress(state+progressSuffix, State{})
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
	var closed State
	if err := p.close(&closed); err != nil {
		t.Fatal(err)
	}
	want := State{
		FilesApplied: []string{"directory /srv", "file /etc/hosts"},
		FilesPending: map[string]rootfs.FileID{"file /etc/issue": id},
	}
	if !reflect.DeepEqual(closed, want) {
		t.Errorf("close = %+v, want %+v", closed, want)
	}
	loaded, err := loadState(state)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(loaded.FilesApplied)
	if !reflect.DeepEqual(loaded, want) {
		t.Errorf("loadState after close = %+v, want %+v", loaded, want)
	}
}

// TestProgressLines: the journal's lines are what json.Marshal writes
// for a progressRecord, names that JSON escapes included.
func TestProgressLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state"+progressSuffix)
	p := newProgress(path, State{})
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
	if err := p.close(&State{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Errorf("journal = %q, %v; want %q", got, err, want)
	}
}
