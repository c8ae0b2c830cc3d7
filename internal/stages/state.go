package stages

import (
	"time"

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
	// Stages lists how each stage run so far ended (flint's own).
	Stages []Record `json:"flintStages,omitempty"`
	// InterruptedStage is the stage an earlier first boot died in, when
	// this boot found its stamp and went on (flint.firstboot.retry=1):
	// for the report. flint's own field.
	InterruptedStage string `json:"interruptedStage,omitempty"`
	// FirstbootStamped says this boot wrote the first-boot stamp: one
	// found without it is an earlier boot's. flint's own field.
	FirstbootStamped bool `json:"firstbootStamped,omitempty"`
}

// Fetched is one config the fetch stages read.
type Fetched struct {
	Kind       string `json:"kind"`   // "base" or "user"
	Source     string `json:"source"` // "system", "cmdline", a platform id, or a referenced config's redacted URL
	Referenced bool   `json:"referenced"`
}

// Record is how one stage ended, for the first-boot report
// (internal/report): the engine appends one to State.Stages when a stage
// finishes or fails, whether or not the rest of the state is saved.
type Record struct {
	Name     string    `json:"name"`
	Start    time.Time `json:"start"`
	Duration int64     `json:"durationMs"`
	// Outcome is "success" or "failure".
	Outcome string `json:"outcome"`
	// Error is the failed stage's error as the journal's stage-failed
	// line has it (escape.Line); the report redacts it again with the
	// config's secrets before it leaves the machine.
	Error string `json:"error,omitempty"`
}
