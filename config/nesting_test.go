package config

import (
	"errors"
	"strings"
	"testing"
)

// TestNestingLimit checks a config nested deeper than the parser's limit is
// refused as a syntax error naming the limit, and one at the limit is read.
func TestNestingLimit(t *testing.T) {
	// The root object is one level and the array under "x" another.
	nested := func(depth int) []byte {
		inner := strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1)
		return []byte(`{"ignition":{"version":"3.4.0"},"x":` + inner + `}`)
	}
	if _, r, err := Parse(nested(100)); err != nil {
		t.Errorf("Parse(nested 100 deep) = %v, want valid\n%s", err, r)
	}
	_, r, err := Parse(nested(101))
	if !errors.Is(err, ErrSyntax) || len(r.Entries) != 1 || r.Entries[0].Message != "nesting deeper than 100 levels" {
		t.Fatalf("Parse(nested 101 deep) = %v\n%s\nwant a syntax error naming the limit", err, r)
	}
	if e := r.Entries[0]; e.Line != 1 || e.Column != 136 {
		t.Errorf("Parse(nested 101 deep): error at line %d col %d, want line 1 col 136 (the 100th bracket)", e.Line, e.Column)
	}
}
