// Package escape makes text that came from a config, a server or a command
// safe to print as part of one line of a log, a console or a report: a
// value can neither end the line (and forge the next one, a fake
// "[finished]"), nor carry a NUL, nor send a terminal control sequence.
//
// Family: plumbing (internal/README.md).
package escape

import (
	"strconv"
	"unicode/utf8"
)

// Needed says whether Line would change s: it holds a C0 control character
// (newline, NUL and tab included), DEL, a C1 control character (U+0080 to
// U+009F: some terminals read U+009B as the start of a control sequence),
// U+2028 or U+2029 (line and paragraph separators) or invalid UTF-8.
func Needed(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c >= 0x80 {
			return neededFrom(s[i:])
		}
	}
	return false
}

// neededFrom is Needed for the rest of s, from its first non-ASCII byte.
func neededFrom(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if escaped(r, n) {
			return true
		}
		s = s[n:]
	}
	return false
}

// escaped says whether the rune r, n bytes long in the input, is written
// as an escape.
func escaped(r rune, n int) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 || r == utf8.RuneError && n == 1
}

// Line returns s unchanged when Needed says it may be printed as it is,
// which is nearly always (a path, a unit name such as
// dev-disk-by\x2dlabel-data.mount). Otherwise it returns s as Go writes it
// in a string literal, without the quotes: \n, \t, \x00, \x1b, \u009b,
// \u2028, \xff for a byte of invalid UTF-8, and also \\ for a backslash
// and \" for a quote, so that the escaped text reads back unambiguously.
func Line(s string) string {
	if !Needed(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
