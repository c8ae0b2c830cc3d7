package config

import (
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
