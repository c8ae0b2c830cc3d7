package stages

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/internal/rootfs"
)

// State is what one stage leaves for the next in the state file (JSON, the
// field names of coreos/ignition internal/state/state.go).
type State struct {
	// FetchedConfigs lists the configs the fetch stages read, for the
	// result file and the journal.
	FetchedConfigs []Fetched `json:"fetchedConfigs,omitempty"`
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

// Fetched is one config the fetch stages read.
type Fetched struct {
	Kind       string `json:"kind"`   // "base" or "user"
	Source     string `json:"source"` // "system", "cmdline", a platform id, or a referenced config's redacted URL
	Referenced bool   `json:"referenced"`
}

// Flag returns the path of the flag file name beside the state file
// (/run/ignition/<name>): the flags the stages leave for the units and
// the generator that come after them.
func (f Files) Flag(name string) string {
	return filepath.Join(filepath.Dir(f.StateFile), name)
}

// WriteFlag creates the empty flag file at path, and its directory.
func WriteFlag(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("flag %s: %w", path, err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return fmt.Errorf("flag %s: %w", path, err)
	}
	return nil
}
