// Package migrate holds what flint's translators from other tools' inputs
// (kickstart files, cloud-init user-data) share: the report entry that says
// what was translated approximately or not at all, the bookkeeping of
// where each part of the output config came from in the input, and the
// repairs of the output tree: the keys the output version lacks left out
// (DropNewer), and what the config rejects removed (Remove, with each
// translator's rule as an option).
//
// Family: translators (internal/README.md).
package migrate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
)

// Entry is one item of the input translated approximately or not at
// all, located in the input (File as the input or its %include names it,
// Line from 1; End is a section's last line; Key the key's path, as in
// users.0.sudo), with what to do instead.
type Entry struct {
	Severity config.Severity `json:"severity"`
	File     string          `json:"file,omitempty"`
	Line     int             `json:"line,omitempty"`
	End      int             `json:"end,omitempty"`
	Key      string          `json:"key,omitempty"`
	Message  string          `json:"message"`
}

// String renders an entry as `flint validate` renders its own: severity
// (info entries are notes), location (file:line, or file:first-last for a
// section), key, message.
func (e Entry) String() string {
	var b strings.Builder
	if e.Severity == config.SeverityInfo {
		b.WriteString("note")
	} else {
		b.WriteString(e.Severity.String())
	}
	if e.File != "" {
		b.WriteString(" at ")
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
			if e.End > e.Line {
				b.WriteByte('-')
				b.WriteString(strconv.Itoa(e.End))
			}
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Entries are a report's entries in the order of the input.
type Entries []Entry

// IsFatal reports whether any entry is an error.
func (es Entries) IsFatal() bool {
	for _, e := range es {
		if e.Severity == config.SeverityError {
			return true
		}
	}
	return false
}

// String renders one entry a line.
func (es Entries) String() string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Nearest finds where the output at a JSON path ($.storage.files.0.mode)
// came from: the origin recorded for the path or for its nearest
// ancestor.
func Nearest[P any](origins map[string]P, path string) (P, bool) {
	for p := path; p != ""; {
		if at, ok := origins[p]; ok {
			return at, true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	var zero P
	return zero, false
}

// Renumber updates the origins after entry k of the list at prefix
// ("$.storage.files.", the dot included) was deleted from the output:
// entry k's origins go, and those of the entries after it move down one.
func Renumber[P any](origins map[string]P, prefix string, k int) {
	moved := map[string]P{}
	for key, at := range origins {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		num, tail, _ := strings.Cut(rest, ".")
		j, err := strconv.Atoi(num)
		if err != nil || j < k {
			continue
		}
		delete(origins, key)
		if j > k {
			nk := prefix + strconv.Itoa(j-1)
			if tail != "" {
				nk += "." + tail
			}
			moved[nk] = at
		}
	}
	for key, at := range moved {
		origins[key] = at
	}
}

// Closing is the closing note of a translator's report: how many of the
// input's items (named by what: "keys", "commands and sections") there
// were, how many were translated, how many left to the image (notes), and
// where those not translated (errors) are.
func Closing(items int, what string, translated, notes int, dropped []string) string {
	msg := fmt.Sprintf("note: %d %s: %d translated, %d left to the image (notes)", items, what, translated, notes)
	if len(dropped) == 0 {
		return msg + ", none dropped: the translation is complete"
	}
	return msg + fmt.Sprintf(", %d not translated (errors): %s", len(dropped), strings.Join(dropped, ", "))
}

// Render is a translator's report as text: one entry a line, then the
// closing note when the input had items at all.
func Render(es Entries, items int, closing fmt.Stringer) string {
	var b strings.Builder
	b.WriteString(es.String())
	if items > 0 {
		b.WriteString(closing.String())
		b.WriteByte('\n')
	}
	return b.String()
}
