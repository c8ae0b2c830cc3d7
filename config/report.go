package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/escape"
)

// Severity ranks a report entry. Only errors make a config invalid.
type Severity int

// The severities, most severe first.
const (
	SeverityError Severity = iota
	SeverityWarning
	SeverityInfo
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	default:
		return "info"
	}
}

// MarshalJSON writes the severity as its name.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a severity name.
func (s *Severity) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	switch name {
	case "error":
		*s = SeverityError
	case "warning":
		*s = SeverityWarning
	case "info":
		*s = SeverityInfo
	default:
		return fmt.Errorf("unknown severity %q", name)
	}
	return nil
}

// Entry is one problem found in a config. Path is a JSON path such as
// $.storage.files.0.path ("" when the problem concerns the whole document);
// Line and Column count from 1, and are 0 when the config did not come from
// JSON text.
type Entry struct {
	Severity Severity `json:"severity"`
	Path     string   `json:"path,omitempty"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	Message  string   `json:"message"`
}

// String renders the entry as one line. The path and the message can hold
// keys and values of the config (a key with a newline in it): they are
// escaped (a newline as \n), so that an entry never forges another.
func (e Entry) String() string {
	var b strings.Builder
	b.WriteString(e.Severity.String())
	sep := " at "
	if e.Path != "" {
		b.WriteString(sep)
		b.WriteString(escape.Line(e.Path))
		sep = ", "
	}
	if e.Line > 0 {
		b.WriteString(sep)
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(" col ")
		b.WriteString(strconv.Itoa(e.Column))
	}
	b.WriteString(": ")
	b.WriteString(escape.Line(e.Message))
	return b.String()
}

// Report is every problem found in a config, in the order found.
type Report struct {
	Entries []Entry `json:"entries"`
}

// IsFatal reports whether any entry is an error.
func (r Report) IsFatal() bool {
	for _, e := range r.Entries {
		if e.Severity == SeverityError {
			return true
		}
	}
	return false
}

// HasWarnings reports whether any entry is a warning.
func (r Report) HasWarnings() bool {
	for _, e := range r.Entries {
		if e.Severity == SeverityWarning {
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

// Merge appends the other report's entries.
func (r *Report) Merge(o Report) { r.Entries = append(r.Entries, o.Entries...) }

// jsonPath is a path into the config: object keys (string) and list indices
// (int).
type jsonPath []any

// with returns a new path with elems appended; the receiver is not modified,
// so sibling paths never share a backing array.
func (p jsonPath) with(elems ...any) jsonPath {
	q := make(jsonPath, len(p), len(p)+len(elems))
	copy(q, p)
	return append(q, elems...)
}

func (p jsonPath) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, e := range p {
		b.WriteByte('.')
		switch e := e.(type) {
		case int:
			b.WriteString(strconv.Itoa(e))
		case string:
			b.WriteString(e)
		}
	}
	return b.String()
}
