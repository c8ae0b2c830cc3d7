package disks

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages"
)

func TestNamesRoot(t *testing.T) {
	links := map[string]string{
		"/dev/disk/by-partlabel/root":                                "/dev/vda4",
		"/dev/disk/by-partuuid/5e4a1c2d-0000-4000-8000-00000000000a": "/dev/vda4",
		"/dev/disk/by-label/old":                                     "/dev/vda4", // a stale link
		"/dev/vda4":                                                  "/dev/vda4",
		"/dev/vdb1":                                                  "/dev/vdb1",
	}
	resolve := func(p string) (string, error) {
		if r, ok := links[p]; ok {
			return r, nil
		}
		return "", fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	f := made{dev: "/dev/vda4", label: "root", uuid: "0B5E07E0-1A2B-4C3D-8E9F-001122334455"}
	cases := []struct {
		root string
		want bool
	}{
		{"LABEL=root", true},
		{"LABEL=Root", false},
		{"label=root", true},
		{"LABEL=old", false}, // what mkfs was given counts, not a link udev has not moved yet
		{"UUID=0b5e07e0-1a2b-4c3d-8e9f-001122334455", true},
		{"UUID=11111111-1a2b-4c3d-8e9f-001122334455", false},
		{"PARTLABEL=root", true},
		{"PARTLABEL=boot", false},
		{"PARTUUID=5E4A1C2D-0000-4000-8000-00000000000A", true},
		{"/dev/vda4", true},
		{"/dev/disk/by-partlabel/root", true},
		{"/dev/vdb1", false},
		{"/dev/nothing", false},
		{"LABEL=", false},
		{"", false},
		{"vda4", false},
		{"ZFS=pool/root", false},
	}
	for _, c := range cases {
		if got := namesRoot(c.root, f, resolve); got != c.want {
			t.Errorf("namesRoot(%q) = %v, want %v", c.root, got, c.want)
		}
	}
	// A filesystem without a label or UUID in the config matches none.
	bare := made{dev: "/dev/vdb1"}
	for _, root := range []string{"LABEL=", "UUID=", "LABEL=root"} {
		if namesRoot(root, bare, resolve) {
			t.Errorf("namesRoot(%q) of a filesystem without label or UUID = true", root)
		}
	}
}

func TestMarkRootFormatted(t *testing.T) {
	cmdline := stages.Cmdline{Args: platform.ParseCmdline("console=ttyS0 root=LABEL=root ignition.firstboot\n")}
	label := func(s string) *string { return &s }
	for _, c := range []struct {
		name  string
		made  []config.Filesystem
		wantF bool
	}{
		{"nothing made", nil, false},
		{"another filesystem", []config.Filesystem{{Label: label("data")}}, false},
		{"the root", []config.Filesystem{{Label: label("data")}, {Label: label("root")}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			flag := filepath.Join(t.TempDir(), "run", "flint", "root-formatted")
			var m madeList
			for i, f := range c.made {
				m.add(fmt.Sprintf("/dev/vda%d", i+2), f)
			}
			markRootFormatted(slog.New(slog.DiscardHandler), cmdline, &m, flag)
			if _, err := os.Stat(flag); (err == nil) != c.wantF {
				t.Errorf("flag exists: %v, want %v", err == nil, c.wantF)
			}
		})
	}
}
