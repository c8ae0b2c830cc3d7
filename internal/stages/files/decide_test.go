//go:build unix

package files

import (
	"io/fs"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/rootfs"
)

func TestDecide(t *testing.T) {
	yes, src := true, "data:,x"
	regular := &rootfs.Info{Mode: 0o644}
	dir := &rootfs.Info{Mode: fs.ModeDir | 0o755}
	symlink := &rootfs.Info{Mode: fs.ModeSymlink | 0o777}
	withContents := config.File{Node: config.Node{Path: "/f"}, Contents: config.Resource{Source: &src}}
	withAppend := config.File{Node: config.Node{Path: "/f"}, Append: []config.Resource{{Source: &src}}}
	overwrite := func(f config.File) config.File { f.Overwrite = &yes; return f }
	files := []struct {
		name     string
		f        config.File
		existing *rootfs.Info
		want     Decision
	}{
		{"nothing there", withContents, nil, DecideCreate},
		{"nothing there, no contents", config.File{}, nil, DecideCreate},
		{"contents over a file", withContents, regular, DecideMatch},
		{"contents over a directory", withContents, dir, DecideRefuse},
		{"no contents, a file there", config.File{}, regular, DecideKeep},
		{"no contents, a symlink there", config.File{}, symlink, DecideRefuse},
		{"fragments, a file there", withAppend, regular, DecideAppend},
		{"fragments, a directory there", withAppend, dir, DecideRefuse},
		{"overwrite a file", overwrite(withContents), regular, DecideReplace},
		{"overwrite a directory", overwrite(withContents), dir, DecideReplace},
		{"overwrite with fragments", overwrite(withAppend), regular, DecideReplace},
	}
	for _, tt := range files {
		if got := DecideFile(tt.f, tt.existing); got != tt.want {
			t.Errorf("DecideFile(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
	dirs := []struct {
		name     string
		d        config.Directory
		existing *rootfs.Info
		want     Decision
	}{
		{"nothing there", config.Directory{}, nil, DecideCreate},
		{"a directory there", config.Directory{}, dir, DecideKeep},
		{"a file there", config.Directory{}, regular, DecideRefuse},
		{"overwrite a directory", config.Directory{Node: config.Node{Overwrite: &yes}}, dir, DecideReplace},
		{"overwrite a file", config.Directory{Node: config.Node{Overwrite: &yes}}, regular, DecideReplace},
	}
	for _, tt := range dirs {
		if got := DecideDirectory(tt.d, tt.existing); got != tt.want {
			t.Errorf("DecideDirectory(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
	links := []struct {
		name     string
		l        config.Link
		existing *rootfs.Info
		want     Decision
	}{
		{"nothing there", config.Link{}, nil, DecideCreate},
		{"a symlink there", config.Link{}, symlink, DecideMatch},
		{"a file there", config.Link{}, regular, DecideRefuse},
		{"hard link, a file there", config.Link{Hard: &yes}, regular, DecideMatch},
		{"overwrite a file", config.Link{Node: config.Node{Overwrite: &yes}}, regular, DecideReplace},
	}
	for _, tt := range links {
		if got := DecideLink(tt.l, tt.existing); got != tt.want {
			t.Errorf("DecideLink(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}
