package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/files"
	"github.com/flintboot/flint/internal/sys"
)

// loadState reads the state file, and folds in the files stage's journal
// beside it (files.FoldJournal); a missing one is an empty state.
func loadState(path string) (stages.State, error) {
	var s stages.State
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("reading state file: %w", err)
	}
	if err == nil {
		if err := json.Unmarshal(raw, &s); err != nil {
			return s, fmt.Errorf("state file %s: %w", path, err)
		}
	}
	if err := files.FoldJournal(files.JournalPath(path), &s); err != nil {
		return s, fmt.Errorf("state file: %w", err)
	}
	return s, nil
}

// saveState writes the state file: mode 0600 in a directory created 0700.
func saveState(path string, s stages.State) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding state: %w", err)
	}
	err = writeRunFile(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(raw)
		return err
	})
	if err != nil {
		return err
	}
	// The state file holds what the journal recorded now.
	if err := os.Remove(files.JournalPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", files.JournalPath(path), err)
	}
	return nil
}

// writeRunFile writes path atomically (sys.WriteFileAtomic), making
// missing parent directories 0700: what flint keeps under /run can hold
// secrets.
func writeRunFile(path string, mode os.FileMode, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating directory for %s: %w", path, err)
	}
	return sys.WriteFileAtomic(path, mode, write)
}
