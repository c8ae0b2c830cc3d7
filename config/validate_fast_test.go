package config

import (
	"encoding/hex"
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

// TestIsHex checks isHex agrees with hex.DecodeString on even lengths.
func TestIsHex(t *testing.T) {
	cases := []string{"", "00", "0123456789abcdef", "ABCDEF", "aF", "0g", "g0", "zz", " 0", "0x", "é0", "\x00a"}
	for b := range 256 {
		cases = append(cases, "a"+string([]byte{byte(b)}))
	}
	for _, s := range cases {
		_, err := hex.DecodeString(s)
		if got, want := isHex(s), err == nil; got != want {
			t.Errorf("isHex(%q) = %v, hex.DecodeString says %v", s, got, want)
		}
	}
}
