package kickstart

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
)

// The severities a translation reports: an error is something the kickstart
// asks for that the config does not do; a warning is an approximation; info
// is a note that needs no action.
const (
	sevError   = config.SeverityError
	sevWarning = config.SeverityWarning
	sevInfo    = config.SeverityInfo
)

// Entry is one command or option translated approximately or not at all,
// located in the kickstart file (File as the kickstart or its %include
// names it, Line from 1), with what to do instead.
type Entry struct {
	Severity config.Severity `json:"severity"`
	File     string          `json:"file,omitempty"`
	Line     int             `json:"line,omitempty"`
	Message  string          `json:"message"`
}

// String renders an entry as `flint validate` renders its own: severity,
// location, message.
func (e Entry) String() string {
	var b strings.Builder
	b.WriteString(e.Severity.String())
	if e.File != "" {
		b.WriteString(" at ")
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// Report is every entry of a translation, in kickstart order.
type Report struct {
	Entries []Entry `json:"entries"`
}

// IsFatal reports whether any entry is an error.
func (r Report) IsFatal() bool {
	for _, e := range r.Entries {
		if e.Severity == sevError {
			return true
		}
	}
	return false
}

// String renders one entry a line.
func (r Report) String() string {
	var b strings.Builder
	for _, e := range r.Entries {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func (r *Report) add(sev config.Severity, at pos, format string, args ...any) {
	r.Entries = append(r.Entries, Entry{Severity: sev, File: at.file, Line: at.line, Message: fmt.Sprintf(format, args...)})
}
