package disks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/flintboot/flint/config"
	gptlib "github.com/flintboot/flint/internal/gpt"
)

// applyToImage applies plan to the image at path as the stage writes a
// table (buildTable, then gpt's Write).
func applyToImage(t *testing.T, path string, plan DiskPlan) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &stage{}
	tbl, err := s.buildTable(f, plan)
	if err != nil {
		t.Fatalf("buildTable() = %v", err)
	}
	if err := tbl.Write(f, plan.Sectors); err != nil {
		t.Fatalf("Write() = %v", err)
	}
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

var diskIdentifier = regexp.MustCompile(`(?m)^Disk identifier \(GUID\): .*$`)

// TestTableMatchesSgdisk plans each case against an image made with
// sgdisk (read back with sfdisk --json, as the stage reads a disk), then
// applies the plan twice: as the stage does, and with sgdisk run with the
// plan's SgdiskArgs, as the stage did before. Both must leave the same
// table: byte for byte where the disk keeps its GPT, and as sgdisk -p and
// sfdisk --json print it (but for the new table's random disk GUID)
// where the table is new. Every partition the config creates has a GUID,
// so that nothing else is random. No root: sgdisk and sfdisk work on
// image files.
func TestTableMatchesSgdisk(t *testing.T) {
	for _, tool := range []string{"sgdisk", "sfdisk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs gdisk and util-linux)", tool)
		}
	}
	g := func(n int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", n, n) }
	for _, tc := range []struct {
		name string
		// setup is sgdisk's arguments for the image before the stage
		// ("" for a blank disk); grow is the MiB added after it.
		setup []string
		// sfdisk is a script for sfdisk instead (a table sgdisk cannot
		// make).
		sfdisk string
		grow   int64
		disk   string
	}{
		{name: "blank disk", disk: fmt.Sprintf(`{"partitions":[
			{"number":1,"label":"EFI-SYSTEM","sizeMiB":16,"typeGuid":"C12A7328-F81F-11D2-BA4B-00A0C93EC93B","guid":%q},
			{"label":"root","guid":%q}]}`, g(1), g(2))},
		{name: "wipe a table", setup: []string{"--new=1:2048:+8M", "--change-name=1:old", "--new=2:0:+8M"},
			disk: fmt.Sprintf(`{"wipeTable":true,"partitions":[{"number":2,"label":"new","sizeMiB":4,"guid":%q}]}`, g(2))},
		{name: "keep, delete, resize, re-create and create",
			setup: []string{
				"--new=1:2048:+8M", "--change-name=1:keep", "--attributes=1:set:0", "--attributes=1:set:60",
				"--new=2:0:+8M", "--change-name=2:gone",
				"--new=3:0:+4M", "--change-name=3:grow", "--typecode=3:C12A7328-F81F-11D2-BA4B-00A0C93EC93B", "--attributes=3:set:2",
				"--new=4:0:+4M", "--change-name=4:redo",
			},
			disk: fmt.Sprintf(`{"partitions":[
				{"number":2,"shouldExist":false,"wipePartitionEntry":true},
				{"number":3,"label":"grow","sizeMiB":6,"resize":true},
				{"number":4,"label":"redone","sizeMiB":2,"wipePartitionEntry":true,"guid":%q},
				{"label":"new","sizeMiB":4,"wipePartitionEntry":true,"guid":%q}]}`, g(4), g(5))},
		{name: "a table whose usable sectors stop short of its backup", sfdisk: "label: gpt\nlast-lba: 100000\nstart=2048, size=8192, name=a\n",
			disk: fmt.Sprintf(`{"partitions":[{"label":"fill","guid":%q}]}`, g(2))},
		{name: "a disk that grew", setup: []string{"--new=1:2048:+8M", "--change-name=1:gone", "--new=2:0:0", "--change-name=2:root"}, grow: 32,
			disk: `{"partitions":[{"number":1,"shouldExist":false,"wipePartitionEntry":true},{"number":2,"label":"root","resize":true,"sizeMiB":0}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			img := filepath.Join(dir, "disk.img")
			if err := os.WriteFile(img, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(img, 64<<20); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				run(t, "sgdisk", append(tc.setup, img)...)
			}
			if tc.sfdisk != "" {
				cmd := exec.Command("sfdisk", "-q", img)
				cmd.Stdin = strings.NewReader(tc.sfdisk)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("sfdisk: %v\n%s", err, out)
				}
			}
			if tc.grow != 0 {
				if err := os.Truncate(img, (64+tc.grow)<<20); err != nil {
					t.Fatal(err)
				}
			}
			var state DiskState
			if tc.setup != nil || tc.sfdisk != "" {
				var err error
				if state, err = ParseSfdiskJSON(run(t, "sfdisk", "--json", img)); err != nil {
					t.Fatal(err)
				}
			}
			state.Device, state.LogicalSectorSize, state.Sectors = img, 512, (64+tc.grow)<<11
			raw := fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"disks":[%s]}}`,
				strings.Replace(tc.disk, "{", fmt.Sprintf(`{"device":%q,`, img), 1))
			cfg, report, err := config.Parse([]byte(raw))
			if err != nil {
				t.Fatalf("config.Parse(%s) = %v\n%s", raw, err, report)
			}
			disk := cfg.Storage.Disks[0]
			plan, err := Plan(disk, state)
			if err != nil {
				t.Fatalf("Plan() = %v", err)
			}

			viaSgdisk := filepath.Join(dir, "sgdisk.img")
			b, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(viaSgdisk, b, 0o600); err != nil {
				t.Fatal(err)
			}
			args := plan.SgdiskArgs()
			args[len(args)-1] = viaSgdisk
			run(t, "sgdisk", args...)
			applyToImage(t, img, plan)

			if !plan.NewTable {
				got, _ := os.ReadFile(img)
				want, _ := os.ReadFile(viaSgdisk)
				if !bytes.Equal(got, want) {
					for off := 0; off < len(got); off += 512 {
						if !bytes.Equal(got[off:off+512], want[off:off+512]) {
							t.Fatalf("sector %d differs from sgdisk's:\ngot  %x\nwant %x", off/512, got[off:off+512], want[off:off+512])
						}
					}
				}
			}
			print := func(p string) string {
				out := string(run(t, "sgdisk", "-p", p))
				return diskIdentifier.ReplaceAllString(strings.ReplaceAll(out, p, "DISK"), "")
			}
			if got, want := print(img), print(viaSgdisk); got != want {
				t.Errorf("sgdisk -p after the stage:\n%s\nafter sgdisk:\n%s", got, want)
			}
			sfdisk := func(p string) DiskState {
				st, err := ParseSfdiskJSON(run(t, "sfdisk", "--json", p))
				if err != nil {
					t.Fatal(err)
				}
				st.Device = ""
				return st
			}
			if got, want := sfdisk(img), sfdisk(viaSgdisk); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("sfdisk --json after the stage: %+v\nafter sgdisk: %+v", got, want)
			}
		})
	}
}

// memReader is an in-memory disk.
type memReader []byte

func (m memReader) ReadAt(b []byte, off int64) (int, error) { return copy(b, m[off:]), nil }

func (m memReader) WriteAt(b []byte, off int64) (int, error) { return copy(m[off:], b), nil }

// TestBuildTableRefusesATableThatChanged: the plan keeps a partition the
// table on the disk no longer holds where sfdisk read it.
func TestBuildTableRefusesATableThatChanged(t *testing.T) {
	const sectors = 8192
	disk := make(memReader, sectors*512)
	tbl, err := gptlib.New(512, sectors, uuid.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl.Entries[0] = gptlib.Entry{Type: uuid.MustParse(linuxFilesystem), GUID: uuid.New(), First: 2048, Last: 5000}
	if err := tbl.Write(disk, sectors); err != nil {
		t.Fatal(err)
	}
	old := part(1, 2048, 2048, "")
	plan := DiskPlan{Device: "/dev/vda", LogicalSectorSize: 512, Sectors: sectors, Partitions: []PartitionPlan{
		{Action: Keep, Number: 1, Start: 2048, Size: 2048, Old: &old},
		{Action: Create, Number: 2, Start: 4096, Size: 2048, TypeGUID: linuxFilesystem},
	}}
	if _, err := (&stage{}).buildTable(disk, plan); !errors.Is(err, ErrTableChanged) {
		t.Errorf("buildTable() = %v, want ErrTableChanged", err)
	}
	// A create over an entry the plan did not see is refused too.
	plan.Partitions = plan.Partitions[1:]
	plan.Partitions[0].Number = 1
	if _, err := (&stage{}).buildTable(disk, plan); !errors.Is(err, ErrTableChanged) {
		t.Errorf("buildTable() creating over an unknown entry = %v, want ErrTableChanged", err)
	}
}
