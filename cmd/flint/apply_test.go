package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/plan"
)

func TestApplyDeviceRewrite(t *testing.T) {
	a := &applyRun{mapped: map[string]string{"/dev/vda": "/dev/loop3", "/dev/nvme0n1": "/dev/loop4"}}
	for _, tc := range []struct{ in, want string }{
		{"/dev/vda", "/dev/loop3"},
		{"/dev/vda1", "/dev/loop3p1"},
		{"/dev/vda12", "/dev/loop3p12"},
		{"/dev/nvme0n1p2", "/dev/loop4p2"},
		{"/dev/vdb1", "/dev/vdb1"},
		{"/dev/vdaX", "/dev/vdaX"},
		{"/dev/vda-1", "/dev/vda-1"},
		{"/dev/disk/by-partlabel/root", "/dev/disk/by-partlabel/root"},
	} {
		if got := a.device(tc.in); got != tc.want {
			t.Errorf("device(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	cfg := parseConfig(t, `{"ignition":{"version":"3.4.0"},"storage":{
	  "disks":[{"device":"/dev/vda"}],
	  "filesystems":[{"device":"/dev/vda1","format":"ext4"},{"device":"/dev/disk/by-partlabel/root","format":"ext4"}],
	  "luks":[{"name":"x","device":"/dev/vda2"}],
	  "raid":[{"name":"md","level":"raid1","devices":["/dev/vda3","/dev/sdz1"]}]}}`)
	cfg = a.rewrite(cfg)
	err := a.ownDevices(cfg)
	if err == nil || !strings.Contains(err.Error(), "names /dev/disk/by-partlabel/root, /dev/sdz1, not a -disk") {
		t.Errorf("ownDevices = %v, want the by-partlabel path and /dev/sdz1 refused", err)
	}
	if got := *cfg.Storage.Luks[0].Device + " " + cfg.Storage.Raid[0].Devices[0]; got != "/dev/loop3p2 /dev/loop3p3" {
		t.Errorf("rewritten LUKS and RAID devices = %s, want /dev/loop3p2 /dev/loop3p3", got)
	}
}

func parseConfig(t *testing.T, s string) config.Config {
	t.Helper()
	cfg, _, err := config.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestApplyDataLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    plan.Plan
		want string
	}{
		{"nothing", plan.Plan{Disks: []plan.Disk{{Device: "/dev/loop0", Before: []plan.Extent{{Number: 1, Fate: "kept"}},
			Partitions: []plan.Partition{{Number: 2, Action: "create"}}}}}, ""},
		{"lost partition", plan.Plan{Disks: []plan.Disk{{Device: "/dev/loop0", Before: []plan.Extent{{Number: 1, Fate: "lost"}}}}}, "partition 1 of /dev/loop0"},
		{"filesystem", plan.Plan{Filesystems: []plan.Filesystem{{Device: "/dev/loop0p1", Found: "ext4", DataLost: true}}}, "the ext4 on /dev/loop0p1"},
	} {
		got := dataLost(&tc.p)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: dataLost = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestApplyRefusals(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.ign")
	os.WriteFile(cfg, []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/x"}]}}`), 0o600)
	os.WriteFile(filepath.Join(dir, "storage.ign"), []byte(`{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[{"device":"/dev/sda1","format":"ext4","path":"/var"}]}}`), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-root", "/", cfg}, "running system's root"},
		{[]string{"-root", "/.", "-allow-running", cfg}, "running system's root"},
		{[]string{"-root", filepath.Join(dir, "none"), cfg}, "-root"},
		{[]string{"-stages", "kargs", "-root", dir, cfg}, "unknown stage"},
		{[]string{"-disk", "vda=x.img", cfg}, "absolute device path"},
		{[]string{cfg}, "give -root DIR, or a filesystem with path /"},
		{[]string{"-root", dir, filepath.Join(dir, "storage.ign")}, "names /dev/sda1, not a -disk"},
	} {
		var out, errb bytes.Buffer
		err := runApply(context.Background(), tc.args, nil, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("apply %q = %v, want %q", tc.args, err, tc.want)
		}
		var ue usageError
		if strings.Contains(tc.want, "stage") && !errors.As(err, &ue) {
			t.Errorf("apply %q = %T, want a usage error", tc.args, err)
		}
	}
	if _, err := os.Lstat("/x"); err == nil {
		t.Error("apply wrote /x on the running system")
	}
}
