package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
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
	for _, err := range []error{
		p.Done("file /etc/motd"),
		p.Pending("file /etc/hosts", id),
		p.Pending("file /etc/issue", id),
		p.Done("file /etc/issue"),
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
		FilesPending:       map[string]rootfs.FileID{"file /etc/hosts": id},
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
