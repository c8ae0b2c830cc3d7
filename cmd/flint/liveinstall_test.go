package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// liveFixture is a live system's files in a temporary directory.
func liveFixture(t *testing.T, cmdline string) (liveOptions, string) {
	t.Helper()
	dir := t.TempDir()
	lo := liveOptions{
		cmdline:    filepath.Join(dir, "cmdline"),
		dirs:       []string{filepath.Join(dir, "flint.d"), filepath.Join(dir, "coreos.d")},
		stamp:      filepath.Join(dir, "reboot"),
		postTarget: "/usr/lib/systemd/system/flint-installer-post.target",
	}
	if err := os.WriteFile(lo.cmdline, []byte(cmdline+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	units := filepath.Join(dir, "units")
	if err := os.Mkdir(units, 0o755); err != nil {
		t.Fatal(err)
	}
	return lo, units
}

func TestLiveGenerator(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cmdline       string
		configFile    bool
		wantInstall   bool
		wantRebooting bool
	}{
		{"not an install", "console=ttyS0 ip=dhcp", false, false, false},
		{"install and reboot", "coreos.inst.install_dev=/dev/vda coreos.inst.image_url=http://h/os.raw.xz", false, true, true},
		{"flint.inst and skip_reboot", "flint.inst.install_dev=/dev/vda flint.inst.skip_reboot", false, true, false},
		{"a config file alone", "console=ttyS0", true, true, true},
		// A refused command line still makes the unit run, and fail on
		// the console.
		{"a refused stream", "coreos.inst.install_dev=/dev/vda coreos.inst.stream=stable", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, units := liveFixture(t, tc.cmdline)
			if tc.configFile {
				os.Mkdir(lo.dirs[1], 0o755)
				os.WriteFile(filepath.Join(lo.dirs[1], "10-disk.yaml"), []byte("dest-device: /dev/vda\n"), 0o644)
			}
			var stderr bytes.Buffer
			if err := runLiveInstall(context.Background(), []string{"--generator", units}, &stderr, lo); err != nil {
				t.Fatalf("generator: %v (%s)", err, stderr.String())
			}
			target, err := os.Readlink(filepath.Join(units, "default.target"))
			if tc.wantInstall != (err == nil) {
				t.Fatalf("default.target link: %q, %v; want one: %v", target, err, tc.wantInstall)
			}
			if tc.wantInstall && target != lo.postTarget {
				t.Errorf("default.target -> %s, want %s", target, lo.postTarget)
			}
			_, err = os.Stat(lo.stamp)
			if tc.wantRebooting != (err == nil) {
				t.Errorf("reboot stamp: %v; want one: %v", err, tc.wantRebooting)
			}
		})
	}
}

func TestLiveFromCmdlineRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, cmdline, want string
	}{
		{"nothing to install", "console=ttyS0", "asks for no install"},
		{"a release stream", "coreos.inst.install_dev=/dev/vda coreos.inst.stream=stable", "no release streams"},
		// The arguments reach flint install, whose checks refuse them
		// before any disk is opened.
		{"no image", "coreos.inst.install_dev=/dev/vda", "no image given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, _ := liveFixture(t, tc.cmdline)
			var stderr bytes.Buffer
			err := runLiveInstall(context.Background(), []string{"--from-cmdline"}, &stderr, lo)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("flint install --from-cmdline with %q = %v, want an error containing %q", tc.cmdline, err, tc.want)
			}
		})
	}
}

func TestLiveUsage(t *testing.T) {
	lo, units := liveFixture(t, "")
	for _, args := range [][]string{
		{"--from-cmdline", "--generator", units},
		{"--generator"},
		{"--from-cmdline", "/dev/vda"},
	} {
		var ue usageError
		if err := runLiveInstall(context.Background(), args, new(bytes.Buffer), lo); !errors.As(err, &ue) {
			t.Errorf("flint install %v = %v, want a usage error", args, err)
		}
	}
}
