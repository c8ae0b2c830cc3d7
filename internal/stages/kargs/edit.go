package kargs

import (
	"slices"
	"strings"
	"unicode"
)

// Edit applies shouldExist, then shouldNotExist, to a kernel command line
// (a BLS options value) and returns the new line and whether its
// arguments changed. Each entry of either list is split into arguments
// like the line itself:
//   - a shouldExist entry whose arguments are not already on the line as
//     a contiguous run, in order, is appended at the end;
//   - every contiguous run of a shouldNotExist entry's arguments is
//     removed, until none is left; an absent one is no error.
//
// Entries that hold no argument are ignored. When nothing changes, line
// is returned as given (its spacing kept); otherwise the arguments are
// joined by single spaces. Applying the same lists to the result changes
// nothing more, unless the lists undo each other (a shouldNotExist entry
// removing part of a shouldExist group); the stage checks for that.
func Edit(line string, shouldExist, shouldNotExist []string) (string, bool) {
	before := Split(line)
	args := slices.Clone(before)
	for _, e := range shouldExist {
		run := Split(e)
		if len(run) > 0 && index(args, run, 0) < 0 {
			args = append(args, run...)
		}
	}
	for _, e := range shouldNotExist {
		run := Split(e)
		if len(run) == 0 {
			continue
		}
		// A removal can join the arguments around it into a new run
		// ("a a b b" without "a b"): look again from just before it,
		// so that no run is left and a second pass changes nothing.
		for i := index(args, run, 0); i >= 0; i = index(args, run, max(0, i-len(run)+1)) {
			args = slices.Delete(args, i, i+len(run))
		}
	}
	if slices.Equal(args, before) {
		return line, false
	}
	return strings.Join(args, " "), true
}

// index returns the first position at or after from where run appears in
// args as a contiguous subsequence, or -1.
func index(args, run []string, from int) int {
	for i := from; i+len(run) <= len(args); i++ {
		if slices.Equal(args[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}

// Split splits a kernel command line into arguments at white space
// outside double quotes, keeping each argument verbatim (quotes
// included), as the kernel's parser groups them (foo="a b" is one
// argument). An unterminated quote runs to the end of the line.
func Split(line string) []string {
	var args []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		if !quoted && unicode.IsSpace(r) {
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		if r == '"' {
			quoted = !quoted
		}
		cur.WriteRune(r)
		in = true
	}
	if in {
		args = append(args, cur.String())
	}
	return args
}
