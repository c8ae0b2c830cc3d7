package disks

// Tests against real loop devices, as root, with the real tools: the
// stage's commands, run for real, must leave disks that sfdisk and blkid
// read back as the config says. They create, and always detach, their own
// loop devices, and rely on no udev: partition nodes come from devtmpfs,
// waited for by polling.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// needRoot skips unless the test can make loop devices and has the tools.
func needRoot(tb testing.TB, tools ...string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root to create loop devices (make test runs it as root)")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		tb.Skipf("no loop device support here: %v", err)
	}
	for _, tool := range append([]string{"losetup", "partx", "sfdisk", "sgdisk", "blkid", "wipefs"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Skipf("%s is not installed (.ci/run installs gdisk, util-linux, e2fsprogs, xfsprogs, btrfs-progs, dosfstools)", tool)
		}
	}
}

// loopDisk makes a sparse image of mib MiB in a fresh temporary directory,
// attaches it to a free loop device with partition scanning, and detaches
// that device (only that one) when the test ends.
func loopDisk(tb testing.TB, mib int64) string {
	tb.Helper()
	img := filepath.Join(tb.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.Truncate(mib << 20); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("losetup", "-f", "--show", "-P", img).Output()
	if err != nil {
		tb.Fatalf("losetup -f --show -P %s: %v", img, err)
	}
	dev := strings.TrimSpace(string(out))
	if !strings.HasPrefix(dev, "/dev/loop") {
		tb.Fatalf("losetup printed %q, want a loop device", dev)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			tb.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// recorder is the real runner, recording argv.
type recorder struct {
	r     sys.Runner
	mu    sync.Mutex
	calls []string
}

func (r *recorder) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, strings.Join(append([]string{name}, args...), " "))
	r.mu.Unlock()
	return r.r.Run(ctx, name, args...)
}

func (r *recorder) writes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w []string
	for _, c := range r.calls {
		if !strings.HasPrefix(c, "sfdisk --json") && !strings.HasPrefix(c, "blkid") && !strings.HasPrefix(c, "wipefs -n") {
			w = append(w, c)
		}
	}
	return w
}

func realDeps(tb testing.TB, cfg config.Config, log *slog.Logger) (Deps, *recorder) {
	rec := &recorder{}
	return Deps{
		Config: cfg, Logger: log, Runner: rec, Devices: blockdev.Kernel{}, Users: blockdev.Kernel{},
		Udev: blockdev.UdevRunning(), DeviceTimeout: 10 * time.Second,
	}, rec
}

func parseConfig(tb testing.TB, raw string) config.Config {
	tb.Helper()
	c, report, err := config.Parse([]byte(raw))
	if err != nil {
		tb.Fatalf("config.Parse(%s) = %v\n%s", raw, err, report)
	}
	return c
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(oplog.NewTextHandler(t.Output(), slog.LevelDebug))
}

func readTable(t *testing.T, dev string) DiskState {
	t.Helper()
	out, err := exec.Command("sfdisk", "--json", dev).Output()
	if err != nil {
		t.Fatalf("sfdisk --json %s: %v", dev, err)
	}
	s, err := ParseSfdiskJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readFS(t *testing.T, dev string) Probed {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-o", "export", dev).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return Probed{}
	}
	if err != nil {
		t.Fatalf("blkid -p -o export %s: %v", dev, err)
	}
	return parseBlkidExport(out)
}

func TestRootPartitionAndFormat(t *testing.T) {
	needRoot(t, "mkfs.ext4", "mkfs.fat", "mkfs.btrfs", "mkswap")
	a, b := loopDisk(t, 256), loopDisk(t, 192)
	// Fresh UUIDs: mkfs.btrfs refuses a UUID any device on the machine
	// (another test's loop device) already has.
	ext4UUID, btrfsUUID := randomUUID(t), randomUUID(t)
	raw := fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[
			{"device":%[1]q,"partitions":[
				{"number":1,"label":"EFI-SYSTEM","sizeMiB":32,"typeGuid":"C12A7328-F81F-11D2-BA4B-00A0C93EC93B","guid":"11111111-2222-4333-8444-555555555555"},
				{"number":2,"label":"root","sizeMiB":96},
				{"label":"swap","sizeMiB":16}]},
			{"device":%[2]q,"wipeTable":true,"partitions":[{"number":1,"label":"var"}]}],
		"filesystems":[
			{"device":"%[1]sp1","format":"vfat","label":"EFI","uuid":"ABCD-1234"},
			{"device":"%[1]sp2","format":"ext4","label":"root","uuid":%[3]q},
			{"device":"%[1]sp3","format":"swap","label":"swap"},
			{"device":"%[2]sp1","format":"btrfs","label":"var","uuid":%[4]q}]}}`, a, b, ext4UUID, btrfsUUID)
	cfg := parseConfig(t, raw)
	d, _ := realDeps(t, cfg, testLogger(t))
	if err := Run(context.Background(), d); err != nil {
		t.Fatalf("Run() = %v", err)
	}

	ta := readTable(t, a)
	if got := len(ta.Partitions); got != 3 {
		t.Fatalf("%s has %d partitions, want 3", a, got)
	}
	p1, p2, p3 := ta.Partitions[0], ta.Partitions[1], ta.Partitions[2]
	if p1.Start != 2048 || p1.Size != 32<<11 || p1.Label != "EFI-SYSTEM" || p1.TypeGUID != "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" || p1.GUID != "11111111-2222-4333-8444-555555555555" {
		t.Errorf("partition 1 = %+v", p1)
	}
	if p2.Start != 2048+32<<11 || p2.Size != 96<<11 || p2.Label != "root" {
		t.Errorf("partition 2 = %+v", p2)
	}
	if p3.Number != 3 || p3.Start != 2048+128<<11 || p3.Size != 16<<11 || p3.Label != "swap" {
		t.Errorf("partition 3 (number 0 in the config) = %+v", p3)
	}
	tb := readTable(t, b)
	if len(tb.Partitions) != 1 || tb.Partitions[0].Start != 2048 || tb.Partitions[0].End() != tb.LastUsable {
		t.Errorf("%s partitions = %+v, want one filling the disk", b, tb.Partitions)
	}
	for dev, want := range map[string]Probed{
		a + "p1": {Type: "vfat", Label: "EFI", UUID: "ABCD-1234"},
		a + "p2": {Type: "ext4", Label: "root", UUID: ext4UUID},
		a + "p3": {Type: "swap", Label: "swap"},
		b + "p1": {Type: "btrfs", Label: "var", UUID: btrfsUUID},
	} {
		got := readFS(t, dev)
		if want.Type == "swap" {
			got.UUID = "" // random
		}
		if got != want {
			t.Errorf("blkid %s = %+v, want %+v", dev, got, want)
		}
	}

	// Run again without wipeTable: everything matches, nothing is
	// written.
	// A number-0 entry always creates a partition, as in Ignition:
	// the second run names the one the first created.
	raw = strings.Replace(raw, `"wipeTable":true,`, "", 1)
	raw = strings.Replace(raw, `{"label":"swap"`, `{"number":3,"label":"swap"`, 1)
	cfg2 := parseConfig(t, raw)
	d, rec := realDeps(t, cfg2, testLogger(t))
	if err := Run(context.Background(), d); err != nil {
		t.Fatalf("second Run() = %v", err)
	}
	if w := rec.writes(); len(w) != 0 {
		t.Errorf("second Run() wrote: %q, want nothing", w)
	}
}

func TestRootConflictsTouchNothing(t *testing.T) {
	needRoot(t, "mkfs.ext4")
	a := loopDisk(t, 64)
	if out, err := exec.Command("sgdisk", "--new=1:2048:+8M", "--change-name=1:data", "--new=2:0:+8M", a).CombinedOutput(); err != nil {
		t.Fatalf("sgdisk: %v: %s", err, out)
	}
	if out, err := exec.Command("partx", "-u", a).CombinedOutput(); err != nil {
		t.Logf("partx -u %s: %v: %s", a, err, out)
	}
	exec.Command("partx", "-a", a).Run() // adds what -u did not; errors for the ones it has
	waitNode(t, a+"p2")
	if out, err := exec.Command("mkfs.ext4", "-q", "-L", "keep", a+"p2").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	before := readTable(t, a)

	// Partition 1 should not exist (no wipePartitionEntry), and the
	// filesystem on partition 2 is not the config's: two conflicts.
	cfg := parseConfig(t, fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":%[1]q,"partitions":[{"number":1,"shouldExist":false},{"number":3,"label":"new"}]}],
		"filesystems":[{"device":"%[1]sp2","format":"xfs"}]}}`, a))
	d, rec := realDeps(t, cfg, testLogger(t))
	err := Run(context.Background(), d)
	if !errors.Is(err, ErrConflict) || !errors.Is(err, ErrFilesystemMismatch) {
		t.Fatalf("Run() = %v, want both a partition conflict and a filesystem mismatch", err)
	}
	if w := rec.writes(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
	after := readTable(t, a)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("the table changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := readFS(t, a+"p2"); got.Type != "ext4" || got.Label != "keep" {
		t.Errorf("%sp2 holds %+v, want the ext4 filesystem untouched", a, got)
	}
}

func TestRootResizeAfterGrowAndDelete(t *testing.T) {
	needRoot(t, "mkfs.ext4")
	a := loopDisk(t, 64)
	if out, err := exec.Command("sgdisk", "--new=1:2048:+8M", "--change-name=1:gone", "--new=2:0:0", "--change-name=2:root", a).CombinedOutput(); err != nil {
		t.Fatalf("sgdisk: %v: %s", err, out)
	}
	exec.Command("partx", "-a", a).Run()
	// Grow the image, as a cloud disk grows, and tell the loop device.
	img, err := exec.Command("losetup", "-n", "-O", "BACK-FILE", a).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(strings.TrimSpace(string(img)), 128<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("losetup", "-c", a).CombinedOutput(); err != nil {
		t.Fatalf("losetup -c: %v: %s", err, out)
	}
	cfg := parseConfig(t, fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":%[1]q,"partitions":[
			{"number":1,"shouldExist":false,"wipePartitionEntry":true},
			{"number":2,"label":"root","resize":true,"sizeMiB":0}]}],
		"filesystems":[{"device":"%[1]sp2","format":"ext4","wipeFilesystem":true,"label":"grown"}]}}`, a))
	d, _ := realDeps(t, cfg, testLogger(t))
	if err := Run(context.Background(), d); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	tbl := readTable(t, a)
	if len(tbl.Partitions) != 1 || tbl.Partitions[0].Number != 2 || tbl.Partitions[0].Start != 2048+8<<11 || tbl.Partitions[0].End() != tbl.LastUsable || tbl.LastUsable < 128<<11-40 {
		t.Errorf("table after = %+v, want partition 2 alone, grown to the new end", tbl)
	}
	if _, err := os.Stat(a + "p1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%sp1 still exists (%v), want the kernel to have dropped it", a, err)
	}
	if got := readFS(t, a+"p2"); got.Type != "ext4" || got.Label != "grown" {
		t.Errorf("%sp2 holds %+v", a, got)
	}
}

// randomUUID is a random version-4 UUID, lower case as blkid prints it.
func randomUUID(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func waitNode(t *testing.T, node string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(node); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 10s", node)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
