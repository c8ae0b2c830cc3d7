package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/stages/fetch"
	"github.com/flintboot/flint/internal/sys"
)

// State is what one stage leaves for the next in the state file (JSON, the
// field names of coreos/ignition internal/state/state.go).
type State struct {
	// FetchedConfigs lists the configs the fetch stages read, for the
	// result file and the journal.
	FetchedConfigs []FetchedConfig `json:"fetchedConfigs,omitempty"`
	// LuksPersistKeyFiles maps a LUKS volume's name to its key as a data
	// URL: written by the disks stage for volumes whose key the files
	// stage must keep (/etc/luks/<name>), cleared by the files stage.
	LuksPersistKeyFiles map[string]string `json:"luksPersistKeyFiles,omitempty"`
	// NotatedDirectories lists the mountpoints the mount stage created,
	// relative to the root, so the files stage can give them to the
	// users whose home they are under.
	NotatedDirectories []string `json:"notatedDirectories,omitempty"`
	// FilesApplied lists the entries of the config the files stage
	// applied ("file /etc/motd", "directory /srv"), and FilesPending the
	// temporary file it was about to rename to an entry's path: the
	// stage, run again after it was killed, skips what they name.
	// flint's own fields; the reference has none.
	FilesApplied []string                 `json:"filesApplied,omitempty"`
	FilesPending map[string]rootfs.FileID `json:"filesPending,omitempty"`
}

// FetchedConfig is one config the fetch stages read.
type FetchedConfig = fetch.Fetched

// loadState reads the state file, and the files stage's journal beside
// it; a missing one is an empty state.
func loadState(path string) (State, error) {
	var s State
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("reading state file: %w", err)
	}
	if err == nil {
		if err := json.Unmarshal(raw, &s); err != nil {
			return s, fmt.Errorf("state file %s: %w", path, err)
		}
	}
	if err := foldProgress(path+progressSuffix, &s); err != nil {
		return s, fmt.Errorf("state file: %w", err)
	}
	return s, nil
}

// saveState writes the state file: mode 0600 in a directory created 0700.
func saveState(path string, s State) error {
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
	if err := os.Remove(path + progressSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", path+progressSuffix, err)
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

// signalNeedNet creates the empty neednet flag file the distro's network
// bring-up keys on, with its parent directories.
func signalNeedNet(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating neednet flag: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("creating neednet flag: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("creating neednet flag: %w", err)
	}
	return nil
}
