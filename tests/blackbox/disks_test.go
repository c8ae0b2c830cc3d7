//go:build linux

package blackbox

import (
	"os"
	"strings"
	"testing"
	"time"
)

// diskCases are every declarative disk case, by area.
func diskCases() []diskCase {
	var cases []diskCase
	for _, area := range [][]diskCase{partitionCases, filesystemCases, storageCases} {
		cases = append(cases, area...)
	}
	return cases
}

// TestDisks runs every disk case at each of its spec versions, serially:
// the cases share the host's loop devices and its two cores, and the tier
// must stay within a few minutes.
func TestDisks(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	start := time.Now()
	names := map[string]bool{}
	for _, c := range diskCases() {
		if names[c.Name] {
			t.Fatalf("two cases are named %s", c.Name)
		}
		names[c.Name] = true
		if (c.Out == nil) == (c.WantFail == "") {
			t.Fatalf("case %s: give either Out or WantFail", c.Name)
		}
	}

	// $FLINT_BLACKBOX_ONLY_NEEDS runs only the cases that declare Needs:
	// the VM tier runs those in a guest whose kernel has md and dm.
	onlyNeeds := os.Getenv("FLINT_BLACKBOX_ONLY_NEEDS") != ""
	for _, c := range diskCases() {
		if onlyNeeds && len(c.Needs) == 0 {
			continue
		}
		for _, v := range c.versions() {
			t.Run(c.Name+"/"+v.String(), func(t *testing.T) { runDiskCase(t, bin, c, v) })
		}
	}
	// The second pass: the cases that succeed, at their newest version,
	// through flint named ignition with Ignition's command line (which
	// has no -device-timeout: a failing case waiting 90 s for a device
	// would only test the wait).
	ign := asIgnition(t, bin)
	for _, c := range diskCases() {
		if (onlyNeeds && len(c.Needs) == 0) || c.WantFail != "" {
			continue
		}
		vs := c.versions()
		v := vs[len(vs)-1]
		t.Run("ignition/"+c.Name+"/"+v.String(), func(t *testing.T) { runDiskCase(t, ign, c, v) })
	}
	t.Logf("disk cases took %v", time.Since(start).Round(time.Millisecond))
}

// TestDiskHarness checks the runner's own reading against what it built,
// with no flint involved: a disk built from a shape reads back as that
// shape, so a failing case is the stage's and not the harness's.
func TestDiskHarness(t *testing.T) {
	requireDisks(t)
	for _, d := range []disk{
		{SizeMiB: 256, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "esp", TypeGUID: typeESP, GUID: "11111111-2222-3333-4444-555555555555",
				FS: &filesystem{Format: "vfat", Label: "EFI", UUID: "ABCD-1234"}},
			{Number: 3, SizeMiB: 16, Label: "data", FS: &filesystem{Format: "ext4", Label: "data", UUID: "22222222-3333-4444-5555-666666666666",
				Files: map[string]string{"etc/kept": "kept\n"}}},
			{Number: 4, SizeMiB: 16, FS: &filesystem{Format: "swap", Label: "swap", UUID: "33333333-4444-5555-6666-777777777777"}},
			{Number: 2, FS: &filesystem{Format: "btrfs", Label: "root", Files: map[string]string{"a/b": "c"}}},
		}},
		{SizeMiB: 64, SectorSize: 4096, Partitions: []partition{{Number: 1, StartMiB: 1, SizeMiB: 8}, {Number: 2, Start: 4096}}},
		{SizeMiB: 64, Table: "none"},
		{SizeMiB: 64, Table: "gpt"},
	} {
		dir := t.TempDir()
		l := attach(t, dir, 0, d.SizeMiB, d.sectorSize())
		buildDisk(t, dir, l, d)
		want := d
		want.Partitions = d.inSectors(d.sectorSize())
		if table, _, last := readTable(t, l); table == "gpt" && last != lastUsable(d.SizeMiB, d.sectorSize()) {
			t.Errorf("last usable sector %d, want sgdisk's %d", last, lastUsable(d.SizeMiB, d.sectorSize()))
		}
		checkDisk(t, dir, l, 0, want)
		if a, b := snapshot(t, l), snapshot(t, l); a != b || !strings.Contains(a, "sfdisk --json") {
			t.Errorf("snapshot is not stable:\n%s\n%s", a, b)
		}
	}
}
