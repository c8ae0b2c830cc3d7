package kickstart

import (
	"fmt"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/migrate"
)

// The severities a translation reports: an error is something the kickstart
// asks for on the target that the config does not do (the line is dropped);
// a warning is an approximation; info is a note, for what the image decides
// by nature (the installation source, the layout of autopart, the packages,
// the installer's user interface), which needs no action.
const (
	sevError   = config.SeverityError
	sevWarning = config.SeverityWarning
	sevInfo    = config.SeverityInfo
)

// Entry is one command or option translated approximately or not at all,
// located in the kickstart file (File as the kickstart or its %include
// names it, Line from 1; End is a section's last line), with what to do
// instead.
type Entry = migrate.Entry

// Report is every entry of a translation, in kickstart order, and the
// closing count.
type Report struct {
	Entries migrate.Entries `json:"entries"`
	Summary Summary         `json:"summary"`
}

// Summary counts the commands and sections of a translation (each
// %include'd file's too) by what became of them. Dropped lists where the
// commands and sections with errors start.
type Summary struct {
	Commands   int      `json:"commands"`
	Translated int      `json:"translated"`
	Notes      int      `json:"notes"`
	Dropped    []string `json:"dropped,omitempty"`
}

// String is the closing note of a report.
func (s Summary) String() string {
	return migrate.Closing(s.Commands, "commands and sections", s.Translated, s.Notes, s.Dropped)
}

// IsFatal reports whether any entry is an error.
func (r Report) IsFatal() bool { return r.Entries.IsFatal() }

// String renders one entry a line, then the closing note.
func (r Report) String() string {
	return migrate.Render(r.Entries, r.Summary.Commands, r.Summary)
}

func (r *Report) add(sev config.Severity, at pos, format string, args ...any) {
	r.Entries = append(r.Entries, Entry{Severity: sev, File: at.file, Line: at.line, Message: fmt.Sprintf(format, args...)})
}

// addSpan reports on a whole section, lines at.line to end.
func (r *Report) addSpan(sev config.Severity, at pos, end int, format string, args ...any) {
	r.add(sev, at, format, args...)
	r.Entries[len(r.Entries)-1].End = end
}
