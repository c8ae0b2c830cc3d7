package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
)

// fakeStampFS is a filesystem kept in a directory: Mount copies its files
// into the mountpoint, Unmount copies them back when it was mounted
// read-write (and fails when a read-only mount was written to), then
// empties the mountpoint. It records every call.
type fakeStampFS struct {
	store   string
	calls   []string
	mounted string
	rw      bool
	seen    map[string]string
	// noFS makes Mount find no filesystem on the device.
	noFS bool
}

func (f *fakeStampFS) Mount(_ context.Context, device, dir string, rw bool) error {
	if f.mounted != "" {
		return errors.New("already mounted at " + f.mounted)
	}
	if f.noFS {
		return errNoStampFS
	}
	f.calls = append(f.calls, map[bool]string{true: "rw", false: "ro"}[rw])
	f.mounted, f.rw = dir, rw
	f.seen = map[string]string{}
	entries, _ := os.ReadDir(f.store)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(f.store, e.Name()))
		if err != nil {
			return err
		}
		f.seen[e.Name()] = string(b)
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeStampFS) Unmount(_ context.Context, dir string) error {
	if f.mounted != dir {
		return errors.New(dir + " is not mounted")
	}
	f.mounted = ""
	now := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		now[e.Name()] = string(b)
		os.Remove(filepath.Join(dir, e.Name()))
	}
	changed := len(now) != len(f.seen)
	for k, v := range now {
		if f.seen[k] != v {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if !f.rw {
		return errors.New("written to through a read-only mount")
	}
	old, _ := os.ReadDir(f.store)
	for _, e := range old {
		os.Remove(filepath.Join(f.store, e.Name()))
	}
	for k, v := range now {
		if err := os.WriteFile(filepath.Join(f.store, k), []byte(v), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// bootFS makes a machine whose stamp lives on a fake boot filesystem.
func bootFS(t *testing.T, fail string) *machineBoots {
	t.Helper()
	m := &machineBoots{dir: t.TempDir(), fail: fail}
	m.stampFile = filepath.Join(m.dir, "run", "stamp", "flint.firstboot-stamp")
	m.device = filepath.Join(m.dir, "dev-boot")
	m.mounter = &fakeStampFS{store: filepath.Join(m.dir, "bootfs")}
	for _, d := range []string{m.mounter.store} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(m.device, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStampOnMountedFilesystem(t *testing.T) {
	m := bootFS(t, "files")
	if err := m.bootOnce(t); err == nil {
		t.Fatal("boot with files failing = nil, want its error")
	}
	// The stamp is never visible while a stage runs: the filesystem is
	// mounted only around its reads and writes.
	if got, want := strings.Join(m.ran, " "), "fetch-offline@ fetch@ kargs@ disks@ mount@ files@"; got != want {
		t.Errorf("stages (with the stamp they saw) = %s, want %s", got, want)
	}
	if got, want := strings.Join(m.mounter.calls, " "), "ro ro ro rw rw rw"; got != want {
		t.Errorf("mounts = %s, want %s", got, want)
	}
	if m.mounter.mounted != "" {
		t.Errorf("still mounted at %s after the boot", m.mounter.mounted)
	}
	raw, err := os.ReadFile(filepath.Join(m.mounter.store, "flint.firstboot-stamp"))
	if err != nil || !strings.Contains(string(raw), `"stage":"files"`) {
		t.Fatalf("stamp on the boot filesystem = %s, %v, want stage files", raw, err)
	}
	m.fail = ""
	if err := m.bootOnce(t); !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "stopped in stage files") {
		t.Fatalf("next boot = %v, want ErrInterrupted naming files", err)
	}
	m.cmdline = KargFirstbootRetry + "=1"
	m.mounter.calls = nil
	if err := m.bootOnce(t); err != nil {
		t.Fatalf("boot with %s=1 = %v, want it to go on", KargFirstbootRetry, err)
	}
	if got, want := strings.Join(m.mounter.calls, " "), "ro ro ro rw rw rw rw ro"; got != want {
		t.Errorf("mounts of the retried boot = %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(m.mounter.store, "flint.firstboot-stamp")); !os.IsNotExist(err) {
		t.Errorf("stamp after the retried boot finished: stat = %v, want it gone", err)
	}
}

func TestStampWithoutItsFilesystem(t *testing.T) {
	m := bootFS(t, "files")
	os.Remove(m.device)
	if err := m.bootOnce(t); err == nil {
		t.Fatal("boot with files failing = nil, want its error")
	}
	m.fail = ""
	if err := m.bootOnce(t); err != nil {
		t.Errorf("boot without the stamp's filesystem = %v, want no stamp and no check", err)
	}
	if len(m.mounter.calls) != 0 {
		t.Errorf("mounts = %v, want none", m.mounter.calls)
	}
}

func TestStampSkippedWhenTheConfigRemakesItsFilesystem(t *testing.T) {
	m := bootFS(t, "files")
	m.cache = filepath.Join(m.dir, "cache.json")
	cfg := `{"ignition":{"version":"` + config.Newest.String() + `"},"storage":{"filesystems":[{"device":"/dev/md/boot","format":"ext4","label":"boot","wipeFilesystem":true}]}}`
	if err := os.WriteFile(m.cache, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.bootOnce(t); err == nil {
		t.Fatal("boot with files failing = nil, want its error")
	}
	if got, want := strings.Join(m.mounter.calls, " "), "ro ro ro"; got != want {
		t.Errorf("mounts = %s, want %s (only the checks before the disks stage)", got, want)
	}
	m.fail = ""
	if err := m.bootOnce(t); err != nil {
		t.Errorf("next boot = %v, want no stamp to stop it", err)
	}
}

func TestStampDeviceTouched(t *testing.T) {
	dir := t.TempDir()
	dev := func(name string) string { return filepath.Join(dir, name) }
	for _, n := range []string{"vda", "vda3", "vda4", "vdb"} {
		if err := os.WriteFile(dev(n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(dev("vda3"), dev("by-label-boot")); err != nil {
		t.Fatal(err)
	}
	partOf := func(p string) (string, int) {
		if p == dev("vda3") {
			return dev("vda"), 3
		}
		return "", 0
	}
	yes, label := true, "boot"
	other := "root"
	for _, tc := range []struct {
		name string
		st   config.Storage
		want string
	}{
		{"nothing", config.Storage{}, ""},
		{"root resized", config.Storage{Disks: []config.Disk{{Device: dev("vda"), Partitions: []config.Partition{{Number: 4, Label: &other, Resize: &yes}}}}}, ""},
		{"other disk wiped", config.Storage{Disks: []config.Disk{{Device: dev("vdb"), WipeTable: &yes}}}, ""},
		{"its disk wiped", config.Storage{Disks: []config.Disk{{Device: dev("vda"), WipeTable: &yes}}}, "wipes the partition table"},
		{"its partition", config.Storage{Disks: []config.Disk{{Device: dev("vda"), Partitions: []config.Partition{{Number: 3}}}}}, "changes partition 3"},
		{"a boot label elsewhere", config.Storage{Disks: []config.Disk{{Device: dev("vdb"), Partitions: []config.Partition{{Label: &label}}}}}, "partition labelled boot"},
		{"reformatted", config.Storage{Filesystems: []config.Filesystem{{Device: dev("by-label-boot"), WipeFilesystem: &yes}}}, "anew"},
		{"kept", config.Storage{Filesystems: []config.Filesystem{{Device: dev("by-label-boot")}}}, ""},
		{"mirrored", config.Storage{Raid: []config.Raid{{Name: "md-boot", Devices: []string{dev("vda")}}}}, "RAID array md-boot"},
	} {
		got := stampDeviceTouched(tc.st, dev("by-label-boot"), partOf)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("stampDeviceTouched(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestStampWithoutAFilesystemOnItsDevice(t *testing.T) {
	m := bootFS(t, "files")
	m.mounter.noFS = true
	if err := m.bootOnce(t); err == nil || errors.Is(err, errNoStampFS) {
		t.Fatalf("boot with files failing and no filesystem for the stamp = %v, want the files stage's error", err)
	}
	m.fail = ""
	if err := m.bootOnce(t); err != nil {
		t.Errorf("next boot = %v, want it to go on without a stamp", err)
	}
	if m.mounter.mounted != "" {
		t.Errorf("still mounted at %s", m.mounter.mounted)
	}
}

func TestDevicesLabelled(t *testing.T) {
	dir := t.TempDir()
	sysBlock, dev := filepath.Join(dir, "sys"), filepath.Join(dir, "dev")
	ext4 := func(label string) []byte {
		b := make([]byte, 4096)
		binary.LittleEndian.PutUint16(b[1080:], 0xef53)
		copy(b[1144:], label)
		return b
	}
	for name, content := range map[string][]byte{"vda": make([]byte, 4096), "vda2": ext4("boot"), "vda4": ext4("root"), "loop0": ext4("boot"), "vdb1": nil} {
		if err := os.MkdirAll(filepath.Join(sysBlock, name), 0o755); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(dev, 0o755)
		if content != nil {
			if err := os.WriteFile(filepath.Join(dev, name), content, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := devicesLabelled(sysBlock, dev, "boot"); len(got) != 1 || got[0] != filepath.Join(dev, "vda2") {
		t.Errorf("devicesLabelled(boot) = %v, want [%s] (not the loop device)", got, filepath.Join(dev, "vda2"))
	}
	if got := devicesLabelled(sysBlock, dev, "data"); len(got) != 0 {
		t.Errorf("devicesLabelled(data) = %v, want none", got)
	}
}

func TestWaitForDevices(t *testing.T) {
	dir := t.TempDir()
	late := filepath.Join(dir, "vda")
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(late, nil, 0o600)
	}()
	start := time.Now()
	waitForDevices([]string{late}, 5*time.Second)
	if _, err := os.Stat(late); err != nil || time.Since(start) > 3*time.Second {
		t.Errorf("waitForDevices(a device that comes up after 0.3s) returned after %v, device: %v", time.Since(start), err)
	}
	start = time.Now()
	waitForDevices([]string{filepath.Join(dir, "never"), filepath.Join(dir, "nor-this")}, 300*time.Millisecond)
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("waitForDevices(devices that never come) returned after %v, want the timeout, 0.3s, in all", d)
	}
}

// A device that comes up is seen soon after, not at the next of
// widely spaced looks: the disks stage waits behind it.
func TestWaitForDevicesSeesTheNodeSoon(t *testing.T) {
	dir := t.TempDir()
	late := filepath.Join(dir, "vdb")
	made := make(chan time.Time, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		os.WriteFile(late, nil, 0o600)
		made <- time.Now()
	}()
	waitForDevices([]string{late}, 5*time.Second)
	seen := time.Now()
	at := <-made
	if d := seen.Sub(at); d > 60*time.Millisecond {
		t.Errorf("waitForDevices saw a device %v after it came up, want at most 60ms", d)
	}
}
