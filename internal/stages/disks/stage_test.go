package disks

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// syncBuffer is a log sink safe for the parallel mkfs runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runStage runs the stage on the fake with cfg, logging to the test, and
// returns the error and the log.
func runStage(t *testing.T, f *fakeOS, cfg string, tweak ...func(*Deps)) (error, string) {
	t.Helper()
	c, report, err := config.Parse([]byte(cfg))
	if err != nil {
		t.Fatalf("config.Parse(%s) = %v\n%s", cfg, err, report)
	}
	var buf syncBuffer
	d := Deps{
		Config: c, Logger: slog.New(oplog.NewTextHandler(&buf, slog.LevelDebug)),
		Runner: f, Devices: f, Users: f, DeviceTimeout: time.Second, SerialMkfs: true,
		// Nothing of the host's: no swap, and links and keys in the
		// test's own directories.
		Swaps: func() ([]string, error) { return nil, nil }, DevDir: t.TempDir(), TempDir: t.TempDir(),
		OpenDisk: f.openDisk,
		ReadDisk: func(p string) (DiskReader, error) { return f.openDisk(p) },
		// No udev database unless the test makes one (fakeOS.udevDB).
		UdevDB: cmp.Or(f.udevDB, filepath.Join(t.TempDir(), "no-udev-db")),
	}
	for _, fn := range tweak {
		fn(&d)
	}
	err = Run(context.Background(), d)
	t.Log(buf.String())
	return err, buf.String()
}

func checkCalls(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("commands:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestRunPartitionsAndFormatsABlankDisk(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	err, log := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[
			{"label":"boot","number":1,"sizeMiB":100,"typeGuid":"C12A7328-F81F-11D2-BA4B-00A0C93EC93B"},
			{"label":"root","number":2}]}],
		"filesystems":[
			{"device":"/dev/vda1","format":"vfat","label":"EFI","uuid":"ABCD-1234"},
			{"device":"/dev/vda2","format":"ext4","label":"root","uuid":"5A4B8C2E-1D2F-4E3A-9B8C-7D6E5F4A3B2C","options":["-E","lazy_itable_init=1"]}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	// The disk's first sectors are zeros: no sfdisk, whose answer that
	// would be "no table" anyway.
	checkCalls(t, f.argvs(), []string{
		"gpt-write /dev/vda 1:2048-206847:boot 2:206848-2097118:root",
		"blkpg-add /dev/vda 1 2048+204800",
		"blkpg-add /dev/vda 2 206848+1890271",
		"blkid -p -o export /dev/vda1",
		"blkid -p -o export /dev/vda2",
		"wipefs -a /dev/vda1",
		"mkfs.fat -i abcd1234 -n EFI /dev/vda1",
		"wipefs -a /dev/vda2",
		"mkfs.ext4 -E lazy_itable_init=1 -F -U 5a4b8c2e-1d2f-4e3a-9b8c-7d6e5f4a3b2c -L root /dev/vda2",
	})
	for _, want := range []string{
		"[finished] writing the partition table of /dev/vda",
		"[finished] adding partition 2 of /dev/vda in the kernel (512-byte sectors 206848+1890271)",
		"[finished] creating the ext4 filesystem on /dev/vda2: mkfs.ext4",
		"create   partition 1 \"boot\"",
		`reading the partition table of /dev/vda duration=0s table=none why="its first two sectors are zeros"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}

	// GUIDs the config leaves out are random (version 4), as sgdisk's.
	for _, p := range f.disks["/dev/vda"].table.Partitions {
		if u, err := uuid.Parse(p.GUID); err != nil || u.Version() != 4 {
			t.Errorf("partition %d has GUID %q, want a random one", p.Number, p.GUID)
		}
	}

	// A second run finds everything as the config says, and writes
	// nothing.
	f.calls = nil
	if err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"label":"boot","number":1,"sizeMiB":100},{"label":"root","number":2}]}],
		"filesystems":[{"device":"/dev/vda1","format":"vfat","label":"EFI","uuid":"abcd1234"},
			{"device":"/dev/vda2","format":"ext4","label":"root","uuid":"5a4b8c2e-1d2f-4e3a-9b8c-7d6e5f4a3b2c"}]}}`); err != nil {
		t.Fatalf("second Run() = %v", err)
	}
	if w := f.wrote(); len(w) != 0 {
		t.Errorf("second run wrote %q, want nothing", w)
	}
	if c := f.argvs(); len(c) == 0 || c[0] != "sfdisk --json /dev/vda" {
		t.Errorf("second run's commands %q: want the table, now there, read by sfdisk first", c)
	}
}

func TestRunReportsEveryConflictAndWritesNothing(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "old"))
	f.addDisk("/dev/vdb", 1024, 512).gpt(part(1, 2048, 2048, "data"), part(2, 4096, 2048, "var"))
	f.addDisk("/dev/vdc", 1024, 512) // fine on its own
	f.mount("/dev/vdb2", "/var")
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[
		{"device":"/dev/vdc","partitions":[{"label":"new","number":1}]},
		{"device":"/dev/vda","partitions":[{"label":"new","number":1}]},
		{"device":"/dev/vdb","partitions":[{"number":2,"shouldExist":false,"wipePartitionEntry":true}]}]}}`)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Run() = %v, want ErrConflict", err)
	}
	for _, want := range []string{
		"nothing was written",
		"disk /dev/vda: the config conflicts with the disk: partition 1 does not match the config (label is \"old\", the config wants \"new\"",
		"disk /dev/vdb: the config conflicts with the disk: partition 2 is in use (mounted at /var): refusing to delete it",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run() = %v\nwant it to contain %q", err, want)
		}
	}
	if w := f.wrote(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
}

func TestRunRefusesToDeleteAPartitionAFilesystemIsOn(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "data"))
	f.sigs["/dev/vda1"] = Probed{Type: "ext4", Label: "data"}
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"number":1,"shouldExist":false,"wipePartitionEntry":true}]}],
		"filesystems":[{"device":"/dev/vda1","format":"ext4","label":"data"}]}}`)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "filesystem on /dev/vda1: the config conflicts with the disk: the plan deletes partition 1 of /dev/vda") {
		t.Fatalf("Run() = %v, want a conflict about the filesystem on the deleted partition", err)
	}
	if w := f.wrote(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
}

// TestRunNumberZeroTakesADeletedNumber: as Ignition 2.27
// (coreos/ignition#2234), a config that deletes partition 2 and creates a
// number-0 partition, which takes number 2, with a filesystem on
// /dev/vda2, is the new partition 2: the filesystem is on it, not on a
// deleted one.
func TestRunNumberZeroTakesADeletedNumber(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "keep"), part(2, 4096, 4096, "old"))
	f.sigs["/dev/vda2"] = Probed{Type: "ext4", Label: "old"}
	err, log := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[
			{"number":2,"shouldExist":false,"wipePartitionEntry":true},
			{"number":0,"label":"new","sizeMiB":8,"wipePartitionEntry":true}]}],
		"filesystems":[{"device":"/dev/vda2","format":"xfs","label":"new","wipeFilesystem":true}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if !strings.Contains(log, `recreate partition 2 "new"`) {
		t.Errorf("the log lacks the re-creation of partition 2")
	}
	checkCalls(t, f.argvs()[len(f.argvs())-2:], []string{"wipefs -a /dev/vda2", "mkfs.xfs -f -L new /dev/vda2"})
	var got []string
	for _, p := range f.disks["/dev/vda"].table.Partitions {
		got = append(got, fmt.Sprintf("%d %s %d+%d", p.Number, p.Label, p.Start, p.Size))
	}
	if want := []string{"1 keep 2048+2048", "2 new 4096+16384"}; !slices.Equal(got, want) {
		t.Errorf("partitions = %q, want %q", got, want)
	}
}

// TestRunWipeFilesystemIsNotProbed: with wipeFilesystem the device is
// not probed (the reuse rule reads no probe, and a blkid process is 0.1 s
// of a TCG boot's critical path); wipefs's list of what it erased is the
// log's record of what the device held.
func TestRunWipeFilesystemIsNotProbed(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 4096, "data"), part(2, 8192, 4096, "keep"))
	f.sigs["/dev/vda1"] = Probed{Type: "xfs", Label: "old"}
	f.sigs["/dev/vda2"] = Probed{Type: "ext4", Label: "keep"}
	err, log := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"filesystems":[
			{"device":"/dev/vda1","format":"ext4","label":"data","wipeFilesystem":true},
			{"device":"/dev/vda2","format":"ext4","label":"keep"}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	// /dev/vda2 is probed before anything is written and again when the
	// filesystems are decided; /dev/vda1 never.
	checkCalls(t, f.argvs(), []string{
		"blkid -p -o export /dev/vda2",
		"blkid -p -o export /dev/vda2",
		"wipefs -a /dev/vda1",
		"mkfs.ext4 -F -L data /dev/vda1",
	})
	for _, want := range []string{
		`decision="create: wipeFilesystem is true"`,
		`signature="/dev/vda1: 2 bytes were erased at offset 0x00000438 (xfs): 53 ef"`,
		`decision="keep: it matches the config"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

func TestRunFailsOnAForeignFilesystemBeforeTouchingAny(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"), part(2, 4096, 2048, "b"), part(3, 6144, 2048, "c"))
	f.sigs["/dev/vda2"] = Probed{Type: "xfs", UUID: "0d5a1c3e-0000-4000-8000-000000000000"}
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"number":1,"label":"a"},{"number":3,"label":"c","sizeMiB":2,"resize":true}]}],
		"filesystems":[
			{"device":"/dev/vda1","format":"ext4"},
			{"device":"/dev/vda2","format":"ext4","label":"b"},
			{"device":"/dev/vda3","format":"btrfs"}]}}`)
	if !errors.Is(err, ErrFilesystemMismatch) || !strings.Contains(err.Error(), "filesystem on /dev/vda2 is not of the correct type, label, or UUID (it holds type xfs, UUID 0d5a1c3e") {
		t.Fatalf("Run() = %v, want ErrFilesystemMismatch naming /dev/vda2", err)
	}
	// Found before partitioning: vda2 is on a partition the plan keeps.
	if w := f.wrote(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}

	// On a partition the plan re-creates, the check comes after
	// partitioning, but still before any filesystem is touched.
	f = newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"), part(2, 4096, 2048, "b"))
	f.sigs["/dev/vda2"] = Probed{Type: "swap"}
	err, _ = runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"number":2,"label":"b","sizeMiB":2,"resize":true}]}],
		"filesystems":[{"device":"/dev/vda1","format":"ext4"},{"device":"/dev/vda2","format":"ext4"}]}}`)
	if !errors.Is(err, ErrFilesystemMismatch) {
		t.Fatalf("Run() = %v, want ErrFilesystemMismatch", err)
	}
	for _, c := range f.wrote() {
		if !strings.HasPrefix(c, "gpt-write") && !strings.HasPrefix(c, "blkpg-") {
			t.Errorf("Run() ran %q after a filesystem conflict", c)
		}
	}
}

func TestReuse(t *testing.T) {
	fs := func(format string, mod ...func(*config.Filesystem)) config.Filesystem {
		f := config.Filesystem{Device: "/dev/vda1", Format: ptr(format)}
		for _, m := range mod {
			m(&f)
		}
		return f
	}
	label := func(l string) func(*config.Filesystem) { return func(f *config.Filesystem) { f.Label = &l } }
	uuid := func(u string) func(*config.Filesystem) { return func(f *config.Filesystem) { f.UUID = &u } }
	wipe := func(f *config.Filesystem) { f.WipeFilesystem = ptr(true) }
	const keep, create, fail = "keep", "create", "fail"
	tests := []struct {
		name string
		fs   config.Filesystem
		on   Probed
		want string
	}{
		{"blank device", fs("ext4"), Probed{}, create},
		{"same type, nothing else asked", fs("ext4"), Probed{Type: "ext4", Label: "x", UUID: "u"}, keep},
		{"other type", fs("ext4"), Probed{Type: "xfs"}, fail},
		{"other type, wiped", fs("ext4", wipe), Probed{Type: "xfs"}, create},
		{"same type, wiped anyway", fs("ext4", wipe), Probed{Type: "ext4"}, create},
		{"label equal", fs("xfs", label("data")), Probed{Type: "xfs", Label: "data"}, keep},
		{"label differs", fs("xfs", label("data")), Probed{Type: "xfs", Label: "Data"}, fail},
		{"label asked, none there", fs("xfs", label("data")), Probed{Type: "xfs"}, fail},
		{"uuid equal ignoring case", fs("btrfs", uuid("5A4B8C2E-1D2F-4E3A-9B8C-7D6E5F4A3B2C")), Probed{Type: "btrfs", UUID: "5a4b8c2e-1d2f-4e3a-9b8c-7d6e5f4a3b2c"}, keep},
		{"uuid differs", fs("btrfs", uuid("5a4b8c2e-1d2f-4e3a-9b8c-7d6e5f4a3b2d")), Probed{Type: "btrfs", UUID: "5a4b8c2e-1d2f-4e3a-9b8c-7d6e5f4a3b2c"}, fail},
		{"vfat volume id without dash", fs("vfat", uuid("abcd1234")), Probed{Type: "vfat", UUID: "ABCD-1234"}, keep},
		{"vfat volume id with dash", fs("vfat", uuid("AbCd-1234")), Probed{Type: "vfat", UUID: "ABCD-1234"}, keep},
		{"dashes only ignored for vfat", fs("ext4", uuid("5a4b8c2e1d2f4e3a9b8c7d6e5f4a3b2c")), Probed{Type: "ext4", UUID: "5a4b8c2e-1d2f-4e3a-9b8c-7d6e5f4a3b2c"}, fail},
		{"none on a blank device", fs("none"), Probed{}, keep},
		{"none on a filesystem", fs("none"), Probed{Type: "ext4"}, fail},
		{"none wiped", fs("none", wipe), Probed{Type: "ext4"}, create},
		{"swap", fs("swap", label("s")), Probed{Type: "swap", Label: "s"}, keep},
		{"a RAID member is a signature too", fs("ext4"), Probed{Type: "linux_raid_member"}, fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keepIt, err := reuse(tt.fs, tt.on)
			got := create
			switch {
			case err != nil:
				got = fail
				if !errors.Is(err, ErrFilesystemMismatch) {
					t.Errorf("reuse() error = %v, want ErrFilesystemMismatch", err)
				}
			case keepIt:
				got = keep
			}
			if got != tt.want {
				t.Errorf("reuse(%+v) = %s (%v), want %s", tt.on, got, err, tt.want)
			}
		})
	}
}

func TestMkfsArgv(t *testing.T) {
	tests := []struct {
		fs   config.Filesystem
		want string
	}{
		{config.Filesystem{Format: ptr("ext4")}, "mkfs.ext4 -F /dev/x"},
		{config.Filesystem{Format: ptr("ext4"), Options: []string{"-b", "4096"}, UUID: ptr("AA-bb"), Label: ptr("root fs")}, "mkfs.ext4 -b 4096 -F -U aa-bb -L root fs /dev/x"},
		{config.Filesystem{Format: ptr("btrfs"), UUID: ptr("U"), Label: ptr("L")}, "mkfs.btrfs --force -U u -L L /dev/x"},
		{config.Filesystem{Format: ptr("xfs"), Options: []string{"-n", "ftype=1"}, UUID: ptr("U"), Label: ptr("L")}, "mkfs.xfs -n ftype=1 -f -m uuid=u -L L /dev/x"},
		{config.Filesystem{Format: ptr("swap"), UUID: ptr("U"), Label: ptr("L")}, "mkswap -f -U u -L L /dev/x"},
		{config.Filesystem{Format: ptr("vfat"), Options: []string{"-F", "32"}, UUID: ptr("ABCD-1234"), Label: ptr("EFI")}, "mkfs.fat -F 32 -i abcd1234 -n EFI /dev/x"},
		{config.Filesystem{Format: ptr("vfat")}, "mkfs.fat /dev/x"},
		{config.Filesystem{Format: ptr("none")}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(mkfsArgv(tt.fs, "/dev/x"), " "); got != tt.want {
			t.Errorf("mkfsArgv(%s) = %q, want %q", *tt.fs.Format, got, tt.want)
		}
	}
}

func TestProbeAmbivalent(t *testing.T) {
	r := &scriptRunner{out: map[string]result{
		"blkid -p -o export /dev/x": {err: &sys.CommandError{ExitCode: 8, Stderr: "ambivalent result (probably more filesystems on the device, use wipefs(8) to see more details)"}},
		"wipefs -n -J /dev/x": {out: `{"signatures":[{"device":"x","offset":"0x1fe","type":"dos","uuid":null,"label":null},` +
			`{"device":"x","offset":"0x438","type":"ext4","uuid":"u1","label":"a"},{"device":"x","offset":"0x0","type":"xfs","uuid":"u2","label":null}]}`},
	}}
	s := &stage{Deps: Deps{Runner: r}, log: slog.New(slog.DiscardHandler)}
	got, err := s.probe(context.Background(), "/dev/x")
	if want := (Probed{Type: "ext4", UUID: "u1", Label: "a"}); err != nil || got != want {
		t.Errorf("probe(ambivalent) = %+v, %v, want %+v", got, err, want)
	}
	r.out["blkid -p -o export /dev/y"] = result{err: &sys.CommandError{ExitCode: 4, Stderr: "boom"}}
	if _, err := s.probe(context.Background(), "/dev/y"); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("probe(failing blkid) = %v, want its error", err)
	}
}

type result struct {
	out string
	err error
}

// scriptRunner answers each argv with a canned result.
type scriptRunner struct{ out map[string]result }

func (r *scriptRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	res, ok := r.out[strings.Join(append([]string{name}, args...), " ")]
	if !ok {
		return nil, &sys.CommandError{Argv: append([]string{name}, args...), ExitCode: 127}
	}
	return []byte(res.out), res.err
}

func TestMkfsRunsInParallelUnlessSerial(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("GOMAXPROCS is 1: mkfs runs one at a time")
	}
	cfg := `{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[
		{"device":"/dev/vda1","format":"ext4"},{"device":"/dev/vda2","format":"xfs"},
		{"device":"/dev/vda3","format":"btrfs"},{"device":"/dev/vda4","format":"vfat"}]}}`
	for _, serial := range []bool{false, true} {
		f := newFakeOS()
		f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, ""), part(2, 4096, 2048, ""), part(3, 6144, 2048, ""), part(4, 8192, 2048, ""))
		want := min(procs, 4)
		if serial {
			want = 1
		}
		g := newGate(want)
		f.mkfsGate = g.enter
		err, _ := runStage(t, f, cfg, func(d *Deps) { d.SerialMkfs = serial })
		if err != nil {
			t.Fatalf("Run(serial=%v) = %v", serial, err)
		}
		if g.max != want {
			t.Errorf("Run(serial=%v): at most %d mkfs ran at once, want %d", serial, g.max, want)
		}
		n := 0
		for _, c := range f.argvs() {
			if strings.HasPrefix(c, "mkfs") {
				n++
			}
		}
		if n != 4 {
			t.Errorf("Run(serial=%v) ran mkfs %d times, want 4", serial, n)
		}
	}
}

func TestMkfsErrorsAreAggregated(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, ""), part(2, 4096, 2048, ""), part(3, 6144, 2048, ""))
	f.fail["mkfs.xfs"] = &sys.CommandError{Argv: []string{"mkfs.xfs"}, ExitCode: 1, Stderr: "mkfs.xfs: cannot open: Device busy", Err: errors.New("exit status 1")}
	f.fail["mkfs.btrfs"] = &sys.CommandError{Argv: []string{"mkfs.btrfs"}, ExitCode: 2, Stderr: "ERROR: bad", Err: errors.New("exit status 2")}
	err, log := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[
		{"device":"/dev/vda1","format":"xfs"},{"device":"/dev/vda2","format":"ext4"},{"device":"/dev/vda3","format":"btrfs"}]}}`,
		func(d *Deps) { d.SerialMkfs = false })
	if err == nil {
		t.Fatal("Run() = nil, want the two mkfs failures")
	}
	for _, want := range []string{"filesystem on /dev/vda1: creating the xfs filesystem on /dev/vda1: mkfs.xfs: exit status 1: mkfs.xfs: cannot open: Device busy",
		"filesystem on /dev/vda3: creating the btrfs filesystem on /dev/vda3: mkfs.btrfs: exit status 2: ERROR: bad"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run() = %v\nwant it to contain %q", err, want)
		}
	}
	if !strings.Contains(log, "[failed] creating the xfs filesystem on /dev/vda1: mkfs.xfs -f /dev/vda1") {
		t.Errorf("the log lacks the failed operation with its command line")
	}
	if p := f.sigs["/dev/vda2"]; p.Type != "ext4" {
		t.Errorf("/dev/vda2 holds %+v, want ext4: one failure does not stop the others", p)
	}
}

func TestWaitForDevices(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	f.links["/dev/disk/by-path/virtio-1"] = "/dev/vda"
	f.missing["/dev/disk/by-path/virtio-1"] = 3
	err, log := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[
		{"device":"/dev/disk/by-path/virtio-1","partitions":[{"label":"a","number":1,"sizeMiB":1}]}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if !strings.Contains(log, "/dev/disk/by-path/virtio-1 is /dev/vda") {
		t.Errorf("the log does not say where the link led")
	}
	if c := f.argvs(); len(c) < 1 || !strings.HasPrefix(c[0], "gpt-write /dev/vda ") {
		t.Errorf("commands %q, want the table written to the resolved node", c)
	}

	start := time.Now()
	err, _ = runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[
		{"device":"/dev/vdq","partitions":[{"label":"a","number":1}]},{"device":"/dev/vdr"}]}}`,
		func(d *Deps) { d.DeviceTimeout = 50 * time.Millisecond })
	if !errors.Is(err, ErrDeviceTimeout) {
		t.Fatalf("Run() = %v, want ErrDeviceTimeout", err)
	}
	for _, want := range []string{"device /dev/vdq: device did not appear after waiting", "device /dev/vdr: device did not appear after waiting"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run() = %v, want it to contain %q", err, want)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run() waited %s for a 50ms timeout", d)
	}
}

// udevCalls lists the udevadm commands the stage ran.
func udevCalls(f *fakeOS) []string {
	var udev []string
	for _, c := range f.argvs() {
		if strings.HasPrefix(c, "udevadm") {
			udev = append(udev, c)
		}
	}
	return udev
}

const udevConfig = `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"number":1}]}],
		"filesystems":[{"device":"/dev/vda1","format":"ext4"}]}}`

// TestUdevSettlesWithoutItsDatabase: where udev keeps no database flint
// can read, the stage settles before it looks for devices.
func TestUdevSettlesWithoutItsDatabase(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	if err, _ := runStage(t, f, udevConfig, func(d *Deps) { d.Udev = true }); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, udevCalls(f), []string{"udevadm settle", "udevadm trigger --settle /dev/vda", "udevadm settle", "udevadm trigger --settle /dev/vda1"})
}

// TestUdevWaitsForEachDevice: with udev's database, the stage waits for
// each device it needs to be processed (its entry), not for udev's whole
// queue: no settle; a disk udev has not processed yet is waited for, and
// one it never processes fails the stage, naming it.
func TestUdevWaitsForEachDevice(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	f.udevDB = t.TempDir()
	late := make(chan struct{})
	go func() {
		defer close(late)
		time.Sleep(30 * time.Millisecond)
		f.mu.Lock()
		f.udevProcessLocked("/dev/vda")
		f.mu.Unlock()
	}()
	err, log := runStage(t, f, udevConfig, func(d *Deps) { d.Udev = true; d.DeviceTimeout = time.Minute })
	<-late
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, udevCalls(f), []string{"udevadm trigger --settle /dev/vda", "udevadm trigger --settle /dev/vda1"})
	if !strings.Contains(log, "[finished] waiting for disks: /dev/vda") {
		t.Errorf("the log lacks the wait for the disk")
	}

	// A disk udev never processes: the stage fails within its timeout.
	g := newFakeOS()
	g.addDisk("/dev/vda", 1024, 512)
	g.udevDB = t.TempDir()
	err, _ = runStage(t, g, udevConfig, func(d *Deps) { d.Udev = true; d.DeviceTimeout = 50 * time.Millisecond })
	if err == nil || !errors.Is(err, ErrDeviceTimeout) || !strings.Contains(err.Error(), "/dev/vda: device did not appear: it is /dev/vda, but udev has not processed it after waiting") {
		t.Errorf("Run() = %v, want the disk udev never processed named", err)
	}
	if w := g.wrote(); len(w) != 0 {
		t.Errorf("wrote %q to a disk udev had not processed", w)
	}
}

func TestRunFailsWhenTheKernelDoesNotFollow(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "gone"))
	f.blkpgAddIgnored = true
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vda","wipeTable":true,"partitions":[
		{"label":"a","number":1,"sizeMiB":2},{"label":"b","number":2,"sizeMiB":2}]}]}}`)
	if !errors.Is(err, ErrKernelView) {
		t.Fatalf("Run() = %v, want ErrKernelView", err)
	}
	if want := "partition 2 (512-byte sectors 6144+4096) is missing"; !strings.Contains(err.Error(), want) {
		t.Errorf("Run() = %v, want it to contain %q", err, want)
	}
}

func TestRunResizesAndDeletesInTheKernel(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 4096).gpt(part(1, 256, 256, "a"), part(2, 512, 256, "b"), part(3, 768, 256, "c"))
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vda","partitions":[
		{"number":1,"label":"a","sizeMiB":1},
		{"number":2,"shouldExist":false,"wipePartitionEntry":true},
		{"number":3,"label":"c","sizeMiB":4,"resize":true}]}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	checkCalls(t, f.argvs(), []string{
		"sfdisk --json /dev/vda",
		"gpt-write /dev/vda 1:256-511:a 3:768-1791:c",
		"blkpg-del /dev/vda 2",
		"blkpg-resize /dev/vda 3 6144+8192",
	})
	d := f.disks["/dev/vda"]
	// The resized entry keeps its GUID, type and name, and the kept one
	// is untouched.
	if got, want := d.table.Partitions, []PartitionState{part(1, 256, 256, "a"), part(3, 768, 1024, "c")}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("table after = %+v, want %+v", got, want)
	}
	if want := map[int]kernelExtent{1: {2048, 2048}, 3: {6144, 8192}}; !mapsEqual(d.kernel, want) {
		t.Errorf("kernel view %v, want %v", d.kernel, want)
	}
}

func mapsEqual(a, b map[int]kernelExtent) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRunRefusesTheSameDiskTwice(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	f.links["/dev/disk/by-path/virtio-1"] = "/dev/vda"
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[
		{"device":"/dev/vda","partitions":[{"label":"a","number":1}]},
		{"device":"/dev/disk/by-path/virtio-1","partitions":[{"label":"b","number":2}]}]}}`)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "disks /dev/vda and /dev/disk/by-path/virtio-1 are the same device") {
		t.Fatalf("Run() = %v, want a conflict naming both paths", err)
	}
	if w := f.wrote(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
}

func TestRunRefusesCEX(t *testing.T) {
	f := newFakeOS()
	err, _ := runStage(t, f, `{"ignition":{"version":"3.5.0"},"storage":{
		"luks":[{"name":"root","device":"/dev/vda","cex":{"enabled":true}}]}}`)
	if !errors.Is(err, ErrNotSupported) {
		t.Fatalf("Run() = %v, want ErrNotSupported", err)
	}
	if got, want := err.Error(), "luks root: IBM CEX keys are not supported"; got != want {
		t.Errorf("Run() = %q, want %q", got, want)
	}
	if c := f.argvs(); len(c) != 0 {
		t.Errorf("Run() ran %q, want nothing", c)
	}
}

func TestRunWithNothingToDo(t *testing.T) {
	f := newFakeOS()
	err, _ := runStage(t, f, `{"ignition":{"version":"3.7.0-experimental"},"storage":{"filesystems":[{"device":"share","format":"virtiofs","path":"/srv"}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if c := f.argvs(); len(c) != 0 {
		t.Errorf("Run() ran %q, want nothing", c)
	}
}

func TestObserveDiskInUse(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"), part(2, 4096, 2048, "b"))
	f.holders["/dev/vda1"] = []string{"md127"}
	f.mount("/dev/vda", "/mnt")
	s := &stage{Deps: Deps{Runner: f, Devices: f, Users: f}, log: slog.New(slog.DiscardHandler)}
	st, err := s.observeDisk(context.Background(), "/dev/vda")
	if err != nil {
		t.Fatal(err)
	}
	if st.InUse != "mounted at /mnt" || st.Partitions[0].InUse != "held by RAID array /dev/md127" || st.Partitions[1].InUse != "" {
		t.Errorf("observeDisk() in use: disk %q, partitions %q %q", st.InUse, st.Partitions[0].InUse, st.Partitions[1].InUse)
	}
	if st.Sectors != 2097152 || st.LogicalSectorSize != 512 || st.Device != "/dev/vda" {
		t.Errorf("observeDisk() = %d sectors of %d bytes on %s", st.Sectors, st.LogicalSectorSize, st.Device)
	}
	if _, err := s.observeDisk(context.Background(), "/dev/vda1"); err == nil || !strings.Contains(err.Error(), "not a whole disk") {
		t.Errorf("observeDisk(partition) = %v, want a refusal", err)
	}
}

// TestRunStopsWhenTheKernelRefuses: a partition the kernel will not drop
// (EBUSY: something opened it after the plan was made) fails the stage;
// nothing re-reads the whole table instead.
func TestRunStopsWhenTheKernelRefuses(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"), part(2, 4096, 2048, "b"))
	f.fail["blkpg-del"] = fmt.Errorf("removing partition 2 of /dev/vda in the kernel (BLKPG): %w", syscall.EBUSY)
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vda","partitions":[
		{"number":2,"shouldExist":false,"wipePartitionEntry":true}]}]}}`)
	if !errors.Is(err, syscall.EBUSY) || !errors.Is(err, ErrKernelView) {
		t.Fatalf("Run() = %v, want EBUSY and ErrKernelView", err)
	}
	checkCalls(t, f.wrote(), []string{"gpt-write /dev/vda 1:2048-4095:a", "blkpg-del /dev/vda 2"})
}
