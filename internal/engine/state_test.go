package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/files"
)

// TestStateFoldsJournal: loading the state folds in the files stage's
// journal (a stage killed midway left it); saving the state, which then
// holds what the journal recorded, removes it.
func TestStateFoldsJournal(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := saveState(state, stages.State{FilesApplied: []string{"directory /srv"}, NotatedDirectories: []string{"/var"}}); err != nil {
		t.Fatal(err)
	}
	journal := `{"done":"file /etc/motd"}` + "\n" + `{"pending":"file /etc/hosts","id":{"dev":8,"ino":42}}` + "\n" + `{"done":"file /etc/cut`
	if err := os.WriteFile(files.JournalPath(state), []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	want := stages.State{
		NotatedDirectories: []string{"/var"},
		FilesApplied:       []string{"directory /srv", "file /etc/motd"},
		FilesPending:       map[string]rootfs.FileID{"file /etc/hosts": {Dev: 8, Ino: 42}},
	}
	s, err := loadState(state)
	if err != nil || !reflect.DeepEqual(s, want) {
		t.Fatalf("loadState = %+v, %v; want %+v", s, err, want)
	}
	if err := saveState(state, s); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(files.JournalPath(state)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the journal stays after the state was saved: %v", err)
	}
	if again, err := loadState(state); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("loadState after saveState = %+v, %v; want %+v", again, err, want)
	}
}
