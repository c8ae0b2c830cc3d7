package agent

import (
	"errors"
	"slices"
	"testing"
)

func TestReadYAMLKeys(t *testing.T) {
	doc, err := readYAMLKeys([]byte("---\n# comment\na: plain value # comment\nb: 'it''s'\nc: \"q\\u00e9\"\nd: [x, 'y']\ne:\n- 1\n- two\n  folded\nf:\n  z: last\n  y: first\ng: ~\nskip:\n  deep:\n    - {x: 1}\n"),
		"a", "b", "c", "d", "e", "f", "g")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"plain value"}, "b": {"it's"}, "c": {"qé"}, "d": {"x", "y"}, "e": {"1", "two folded"}, "f": {"first", "last"}, "g": {""}}
	for k, v := range want {
		if !slices.Equal(doc[k], v) {
			t.Errorf("%s = %q, want %q", k, doc[k], v)
		}
	}
	for _, bad := range []string{"a: 1\na: 2\n", "a: |\n  x\n", "a: *x\n", "\ta: 1\n", "a:\n  - - x\n", "a: \"open\n", "a: [x, [y]]\n", "plain line\n", "a:\n  k: 1\n  k: 2\n"} {
		if _, err := readYAMLKeys([]byte(bad), "a"); !errors.Is(err, errYAML) {
			t.Errorf("%q: %v, want errYAML", bad, err)
		}
	}
}
