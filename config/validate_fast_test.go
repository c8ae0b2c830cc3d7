package config

import (
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAnyUnderLink checks the set lookup agrees with comparing every link
// with every path, on paths the checker also sees when they are not clean.
func TestAnyUnderLink(t *testing.T) {
	paths := []string{"", "/", "//", "/a", "/a/", "/a/b", "/ab", "/ab/c", "/a//b", "a/b", "/a/b/c/d", "/x/y"}
	for _, link := range paths {
		for _, other := range paths {
			for _, kind := range []string{"file", "directory", "link"} {
				s := Storage{Links: []Link{{Node: Node{Path: link}}}}
				switch kind {
				case "file":
					s.Files = []File{{Node: Node{Path: other}}}
				case "directory":
					s.Directories = []Directory{{Node: Node{Path: other}}}
				case "link":
					s.Links = append(s.Links, Link{Node: Node{Path: other}})
				}
				if got, want := anyUnderLink(s), bruteUnderLink(s); got != want {
					t.Errorf("link %q, %s %q: anyUnderLink = %v, want %v", link, kind, other, got, want)
				}
			}
		}
	}
}

func bruteUnderLink(s Storage) bool {
	var all []string
	for _, f := range s.Files {
		all = append(all, f.Path)
	}
	for _, d := range s.Directories {
		all = append(all, d.Path)
	}
	for _, l := range s.Links {
		all = append(all, l.Path)
	}
	for _, l := range s.Links {
		for _, p := range all {
			if strings.HasPrefix(p, l.Path+"/") {
				return true
			}
		}
	}
	return false
}

// TestCheckerAt checks paths carved from the checker's slab equal with's,
// and stay unchanged when the slab is reused or a path is appended to.
func TestCheckerAt(t *testing.T) {
	var c checker
	root := c.at(nil, "storage")
	var paths []jsonPath
	for i := range pathSlab {
		p := c.at(root, "files", i)
		paths = append(paths, p, c.at(p, "contents", "source"))
		_ = append(p, "overwritten") // must not land in the next path
	}
	long := make(jsonPath, pathSlab+1)
	if got := c.at(long, "x"); len(got) != pathSlab+2 || got[pathSlab+1] != "x" {
		t.Fatalf("at on a path longer than the slab = %d elements ending in %v", len(got), got[len(got)-1])
	}
	for i := range pathSlab {
		want := jsonPath{"storage", "files", i}
		if got := paths[2*i].String(); got != want.String() {
			t.Fatalf("path %d = %s, want %s", i, got, want)
		}
		if got, want := paths[2*i+1].String(), want.with("contents", "source").String(); got != want {
			t.Fatalf("path %d = %s, want %s", i, got, want)
		}
	}
}

// unitCases are unit files simpleUnitSections reads (true) or leaves to
// the lexer (false).
var unitCases = []struct {
	in     string
	simple bool
}{
	{"", true},
	{"[Unit]\nDescription=x\n\n[Service]\nType=oneshot\nExecStart=/usr/bin/true --a=b\nRemainAfterExit=yes\n\n[Install]\nWantedBy=multi-user.target\n", true},
	{"# comment\n; other\n[Unit]\n# Key=not an option\nA=b", true},
	{"[Unit]\n[Install]\n", true},                     // sections without options do not count
	{"junk before = any header\n[Unit]\nA=b\n", true}, // skipped byte by byte, '=' and all
	{"x#[No]\n[Unit]\nA=\n", true},
	{"[Unit]  \t\nA = b\n  B=c\n\t\n=d\n", true},
	{"[Un\nit]\nA=b\n", true},
	{"[[a]\nx[y=z\n", true},
	{"[]\nA=b\n", true},
	{"[Unit] garbage\nA=b\n", false},
	{"[Unit\nA=b\n", false},
	{"[Unit]\nNoEquals\n", false},
	{"[Unit]\nNoEquals", false},
	{"[Unit]\nA=b\\\n c\n", false},
	{"[Unit]\r\nA=b\r\n", false},
	{"[Unit]\nA=é\n", false},
	{"[Unit]\nA=b\x00\n", false},
	{"[Unit]\n\vA=b\n", false},
	{"[Unit]\nA=" + strings.Repeat("x", 2048) + "\n", false},
}

// TestSimpleUnitSections checks the shortcut agrees with go-systemd's
// lexer wherever it answers, and answers for the common unit files.
func TestSimpleUnitSections(t *testing.T) {
	for _, tc := range unitCases {
		got, ok := simpleUnitSections(tc.in)
		if ok != tc.simple {
			t.Errorf("simpleUnitSections(%q) ok = %v, want %v", tc.in, ok, tc.simple)
		}
		checkSimpleUnitSections(t, tc.in, got, ok)
	}
	// Unit-like texts built from pieces that exercise the lexer's states.
	pieces := []string{"[Unit]", "[Install]", "[X", "]", "[", "\n", "\n", " ", "\t", "#", ";", "=", "A", "Key=v", "a b", "x[y]", "\\", "\r", "é"}
	r := rand.New(rand.NewPCG(3, 4))
	simple := 0
	for range 50000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		got, ok := simpleUnitSections(b.String())
		checkSimpleUnitSections(t, b.String(), got, ok)
		if ok {
			simple++
		}
	}
	if simple < 5000 {
		t.Fatalf("only %d of 50,000 random texts took the shortcut: the comparison covers too little", simple)
	}
}

func checkSimpleUnitSections(t *testing.T, in string, got map[string]bool, ok bool) {
	t.Helper()
	if !ok {
		return
	}
	want, err := lexedUnitSections(in)
	if err != nil {
		t.Fatalf("simpleUnitSections(%q) = %v, but the lexer fails: %v", in, got, err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("simpleUnitSections(%q) = %v, the lexer finds %v", in, got, want)
	}
}

// FuzzSimpleUnitSections checks the shortcut against the lexer on any text.
func FuzzSimpleUnitSections(f *testing.F) {
	for _, tc := range unitCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := simpleUnitSections(in)
		checkSimpleUnitSections(t, in, got, ok)
	})
}

// TestDuplicateKey checks the pairwise comparison of small objects and the
// map of large ones flag the same members: each repeat of an earlier key.
func TestDuplicateKey(t *testing.T) {
	var many []string
	for i := range smallObject + 5 {
		many = append(many, string(rune('a'+i%7)))
	}
	for _, keys := range [][]string{
		{}, {"a"}, {"a", "a"}, {"a", "b", "a", "a"}, {"A", "a"}, {"", ""}, {"ab", "a", "b", "ab"}, many,
	} {
		want := map[string]bool{}
		seen := map[string]bool{}
		for i, k := range keys {
			if got := duplicateKey(keys[:i+1], nil); got != want[k] {
				t.Errorf("keys %q: duplicateKey(%d) pairwise = %v, want %v", keys, i, got, want[k])
			}
			if got := duplicateKey(keys[:i+1], seen); got != want[k] {
				t.Errorf("keys %q: duplicateKey(%d) with a map = %v, want %v", keys, i, got, want[k])
			}
			want[k] = true
		}
	}
}
