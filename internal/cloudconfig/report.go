package cloudconfig

import (
	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/migrate"
)

// The severities of a report: an error is something the user-data asks
// for on the target that the config does not do (the key is dropped); a
// warning is an approximation; info is a note, for what an image decides
// by nature (its packages, its repositories), which needs no action.
const (
	sevError   = config.SeverityError
	sevWarning = config.SeverityWarning
	sevInfo    = config.SeverityInfo
)

// Entry is one key translated approximately or not at all: File names the
// user-data (and its part, for multipart user-data), Line counts from 1 in
// that part, Key is the key's path (users.0.sudo).
type Entry = migrate.Entry

// Summary counts the top-level keys (and non-cloud-config parts) of a
// translation by what became of them; Dropped lists where those with
// errors are.
type Summary struct {
	Keys       int      `json:"keys"`
	Translated int      `json:"translated"`
	Notes      int      `json:"notes"`
	Dropped    []string `json:"dropped,omitempty"`
}

// String is the closing note of a report.
func (s Summary) String() string {
	return migrate.Closing(s.Keys, "keys", s.Translated, s.Notes, s.Dropped)
}

// Report is every entry of a translation in the order of the user-data,
// and the closing count.
type Report struct {
	Entries migrate.Entries `json:"entries"`
	Summary Summary         `json:"summary"`
}

// IsFatal reports whether any entry is an error.
func (r Report) IsFatal() bool { return r.Entries.IsFatal() }

// String renders one entry a line, then the closing note.
func (r Report) String() string {
	return migrate.Render(r.Entries, r.Summary.Keys, r.Summary)
}
