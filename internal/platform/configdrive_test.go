package platform

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

// driveMounter is a fake Mounter for config drives: it "mounts" a device
// path by copying the directory tree registered for it into the target,
// and "unmounts" by emptying the target again. It records every call.
type driveMounter struct {
	mu       sync.Mutex
	trees    map[string]string // device path → directory with the drive's files
	mountErr error             // returned by every Mount when set
	mounts   []driveMount      // every Mount call, in order
	active   map[string]string // target → source, while mounted
	unmounts []string
}

type driveMount struct {
	Source, Target, FSType string
	Flags                  uintptr
}

func newDriveMounter() *driveMounter {
	return &driveMounter{trees: map[string]string{}, active: map[string]string{}}
}

func (m *driveMounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts = append(m.mounts, driveMount{source, target, fstype, flags})
	if m.mountErr != nil {
		return m.mountErr
	}
	tree, ok := m.trees[source]
	if !ok {
		return fmt.Errorf("fake mount %s: no such device", source)
	}
	if err := os.CopyFS(target, os.DirFS(tree)); err != nil {
		return err
	}
	m.active[target] = source
	return nil
}

func (m *driveMounter) Unmount(target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.active[target]; !ok {
		return fmt.Errorf("fake unmount %s: not mounted", target)
	}
	delete(m.active, target)
	m.unmounts = append(m.unmounts, target)
	return emptyMountPoint(target)
}

// emptyMountPoint empties a fake mount's target on unmount, as the real
// unmount leaves the mount point as it was before: what the fake mounters
// copied there goes.
func emptyMountPoint(target string) error {
	entries, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(target, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// checkClean fails t when a drive is still mounted or a mount point was
// left behind.
func (m *driveMounter) checkClean(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.active) != 0 {
		t.Errorf("drives still mounted: %v", m.active)
	}
	for _, mnt := range m.mounts {
		if _, err := os.Stat(mnt.Target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("mount point %s left behind (stat: %v)", mnt.Target, err)
		}
		if mnt.Flags&mountReadOnly == 0 {
			t.Errorf("drive %s mounted without MS_RDONLY (flags %#x)", mnt.Source, mnt.Flags)
		}
	}
}

// writeDrive creates, under root, the block device /dev/<name> holding the
// first bytes of a fstype filesystem, links /dev/disk/by-label/<label> to
// it (no link when label is ""), and registers files as its contents with
// m. It returns the by-label path.
func writeDrive(t *testing.T, root string, m *driveMounter, name, label, fstype string, files map[string]string) string {
	t.Helper()
	byLabel := stageDrive(t, root, m, name, label, fstype, files)
	if label == "" {
		return byLabel
	}
	if err := linkLabel(root, name, label); err != nil {
		t.Fatal(err)
	}
	return byLabel
}

// stageDrive is writeDrive without the by-label link: the drive is there
// but udev has not announced it yet (see linkLabel).
func stageDrive(t *testing.T, root string, m *driveMounter, name, label, fstype string, files map[string]string) string {
	t.Helper()
	dev := filepath.Join(root, "dev", name)
	if err := os.MkdirAll(filepath.Dir(dev), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dev, fsImage(t, fstype), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	mapfs := fstest.MapFS{}
	for p, c := range files {
		mapfs[p] = &fstest.MapFile{Data: []byte(c), Mode: 0o644}
	}
	if err := os.CopyFS(tree, mapfs); err != nil {
		t.Fatal(err)
	}
	byLabel := filepath.Join(root, byLabelDir, label)
	if m != nil {
		m.mu.Lock()
		m.trees[byLabel] = tree
		m.trees[dev] = tree
		m.mu.Unlock()
	}
	return byLabel
}

// linkLabel links /dev/disk/by-label/<label> to /dev/<name> under root the
// way udev does: a relative symlink.
func linkLabel(root, name, label string) error {
	byLabel := filepath.Join(root, byLabelDir, label)
	if err := os.MkdirAll(filepath.Dir(byLabel), 0o755); err != nil {
		return err
	}
	return os.Symlink(filepath.Join("..", "..", name), byLabel)
}

// fsImage returns the first bytes of a filesystem of the given type, just
// what the probe looks at. "udf" is a UDF bridge disc (ISO 9660
// descriptors, then BEA01 NSR02 TEA01), "udf-pure" has only the UDF
// sequence, "udf-4k" has it on 4096-byte sectors.
func fsImage(t *testing.T, fstype string) []byte {
	t.Helper()
	img := make([]byte, 96<<10)
	vsd := func(off int, typ byte, id string) {
		img[off] = typ
		copy(img[off+1:], id)
		img[off+6] = 1
	}
	switch fstype {
	case "iso9660":
		vsd(vrsStart, 1, "CD001")
		vsd(vrsStart+2048, 255, "CD001")
	case "udf":
		vsd(vrsStart, 1, "CD001")
		vsd(vrsStart+2048, 255, "CD001")
		vsd(vrsStart+4096, 0, "BEA01")
		vsd(vrsStart+6144, 0, "NSR02")
		vsd(vrsStart+8192, 0, "TEA01")
	case "udf-pure":
		vsd(vrsStart, 0, "BEA01")
		vsd(vrsStart+2048, 0, "NSR03")
		vsd(vrsStart+4096, 0, "TEA01")
	case "udf-4k":
		vsd(vrsStart, 0, "BEA01")
		vsd(vrsStart+4096, 0, "NSR03")
		vsd(vrsStart+8192, 0, "TEA01")
	case "nsr-after-gap":
		// An NSR identifier after the sequence ended is not UDF.
		vsd(vrsStart, 0, "BEA01")
		vsd(vrsStart+2048, 0, "TEA01")
		vsd(vrsStart+8192, 0, "NSR02")
	case "ext4":
		binary.LittleEndian.PutUint16(img[1024+56:], 0xEF53)
	case "fat16":
		copy(img, []byte{0xEB, 0x3C, 0x90})
		copy(img[54:], "FAT16   ")
		img[510], img[511] = 0x55, 0xAA
	case "fat32":
		copy(img, []byte{0xEB, 0x58, 0x90})
		copy(img[82:], "FAT32   ")
		img[510], img[511] = 0x55, 0xAA
	case "mbr":
		// A partition table: boot signature, no FAT boot sector.
		img[510], img[511] = 0x55, 0xAA
	case "fat-no-jump":
		copy(img[54:], "FAT16   ")
		img[510], img[511] = 0x55, 0xAA
	case "short":
		return []byte("tiny")
	case "zero":
	default:
		t.Fatalf("fsImage: unknown type %q", fstype)
	}
	return img
}

func TestProbeFS(t *testing.T) {
	tests := []struct {
		image string
		want  string // "" means errUnknownFS
	}{
		{"iso9660", "iso9660"},
		{"udf", "udf"},
		{"udf-pure", "udf"},
		{"udf-4k", "udf"},
		{"nsr-after-gap", ""},
		{"ext4", "ext4"},
		{"fat16", "vfat"},
		{"fat32", "vfat"},
		{"mbr", ""},
		{"fat-no-jump", ""},
		{"short", ""},
		{"zero", ""},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got, err := probeFS(bytes.NewReader(fsImage(t, tt.image)))
			if tt.want == "" {
				if !errors.Is(err, errUnknownFS) {
					t.Errorf("probeFS(%s) = %q, %v, want errUnknownFS", tt.image, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("probeFS(%s) = %q, %v, want %q", tt.image, got, err, tt.want)
			}
		})
	}
}

// TestProbeFSRealImages runs the probe on filesystems made by the real
// mkfs tools, when they are installed.
func TestProbeFSRealImages(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		want string
		tool string
		args func(img string) []string
	}{
		{"vfat-fat12", "vfat", "mkfs.vfat", func(img string) []string { return []string{"-n", "CIDATA", img} }},
		{"vfat-fat16", "vfat", "mkfs.vfat", func(img string) []string { return []string{"-F", "16", img} }},
		{"vfat-fat32", "vfat", "mkfs.vfat", func(img string) []string { return []string{"-F", "32", img} }},
		{"ext2", "ext4", "mke2fs", func(img string) []string { return []string{"-q", "-F", "-t", "ext2", img} }},
		{"ext4", "ext4", "mkfs.ext4", func(img string) []string { return []string{"-q", "-F", "-L", "config-2", img} }},
		{"iso9660-genisoimage", "iso9660", "genisoimage", func(img string) []string {
			return []string{"-quiet", "-V", "config-2", "-o", img, dir}
		}},
		{"iso9660-xorriso", "iso9660", "xorrisofs", func(img string) []string {
			return []string{"-quiet", "-V", "config-2", "-o", img, dir}
		}},
		{"udf-mkudffs", "udf", "mkudffs", func(img string) []string { return []string{img} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := exec.LookPath(tt.tool)
			if err != nil {
				t.Skipf("%s is not installed", tt.tool)
			}
			img := filepath.Join(t.TempDir(), "fs.img")
			if err := os.WriteFile(img, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(img, 40<<20); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tool, tt.args(img)...).CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s", tool, tt.args(img), err, out)
			}
			got, err := probeDeviceFS(img)
			if err != nil || got != tt.want {
				t.Errorf("probeDeviceFS(%s image) = %q, %v, want %q", tt.name, got, err, tt.want)
			}
		})
	}
}

func localTestLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(localLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// localLogWriter sends log lines to t.Log.
type localLogWriter struct{ t *testing.T }

func (w localLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func TestReadDriveFile(t *testing.T) {
	const userData = `{"ignition":{"version":"3.4.0"}}`
	type drive struct {
		name, label, fstype string
		files               map[string]string
	}
	tests := []struct {
		name     string
		drives   []drive
		later    *drive // appears after a while
		labels   []string
		mountErr error
		want     string
		wantFS   string
		wantErr  error // errors.Is target; nil means success
	}{
		{
			name:   "iso9660 config-2",
			drives: []drive{{"sr0", "config-2", "iso9660", map[string]string{"openstack/latest/user_data": userData}}},
			labels: []string{"config-2", "CONFIG-2"},
			want:   userData, wantFS: "iso9660",
		},
		{
			name:   "second label, vfat",
			drives: []drive{{"vdb", "CONFIG-2", "fat16", map[string]string{"openstack/latest/user_data": userData}}},
			labels: []string{"config-2", "CONFIG-2"},
			want:   userData, wantFS: "vfat",
		},
		{
			name:   "ext4",
			drives: []drive{{"vdc", "config-2", "ext4", map[string]string{"openstack/latest/user_data": userData}}},
			labels: []string{"config-2"},
			want:   userData, wantFS: "ext4",
		},
		{
			name:    "other label ignored",
			drives:  []drive{{"sr1", "cidata", "iso9660", map[string]string{"openstack/latest/user_data": userData}}},
			labels:  []string{"config-2"},
			wantErr: errNoDrive,
		},
		{
			name:    "no file",
			drives:  []drive{{"sr0", "config-2", "iso9660", map[string]string{"openstack/latest/meta_data.json": "{}"}}},
			labels:  []string{"config-2"},
			wantErr: ErrNoConfig, wantFS: "iso9660",
		},
		{
			name:    "empty file",
			drives:  []drive{{"sr0", "config-2", "udf", map[string]string{"openstack/latest/user_data": ""}}},
			labels:  []string{"config-2"},
			wantErr: ErrNoConfig, wantFS: "udf",
		},
		{
			name:    "no drive",
			labels:  []string{"config-2"},
			wantErr: errNoDrive,
		},
		{
			name:   "drive appears later",
			later:  &drive{"sr0", "config-2", "iso9660", map[string]string{"openstack/latest/user_data": userData}},
			labels: []string{"config-2"},
			want:   userData, wantFS: "iso9660",
		},
		{
			name:    "unknown filesystem",
			drives:  []drive{{"vdb", "config-2", "mbr", map[string]string{"openstack/latest/user_data": userData}}},
			labels:  []string{"config-2"},
			wantErr: errUnknownFS,
		},
		{
			name:     "mount fails",
			drives:   []drive{{"sr0", "config-2", "iso9660", map[string]string{"openstack/latest/user_data": userData}}},
			labels:   []string{"config-2"},
			mountErr: errFakeMount,
			wantErr:  errFakeMount, wantFS: "iso9660",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			m.mountErr = tt.mountErr
			for _, d := range tt.drives {
				writeDrive(t, root, m, d.name, d.label, d.fstype, d.files)
			}
			env := Env{Root: root, Mounter: m, Logger: localTestLogger(t)}
			wait := 200 * time.Millisecond
			linked := make(chan error, 1)
			if d := tt.later; d != nil {
				wait = 5 * time.Second
				stageDrive(t, root, m, d.name, d.label, d.fstype, d.files)
				go func() {
					time.Sleep(100 * time.Millisecond)
					linked <- linkLabel(root, d.name, d.label)
				}()
			} else {
				linked <- nil
			}
			got, err := readDriveFile(context.Background(), env, tt.labels, "/openstack/latest/user_data", wait)
			if err := <-linked; err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("readDriveFile() = %q, %v, want %v", got, err, tt.wantErr)
				}
			} else if err != nil || string(got) != tt.want {
				t.Errorf("readDriveFile() = %q, %v, want %q", got, err, tt.want)
			}
			if tt.wantFS != "" {
				if len(m.mounts) != 1 || m.mounts[0].FSType != tt.wantFS {
					t.Errorf("mounts = %+v, want one %s mount", m.mounts, tt.wantFS)
				}
			} else if len(m.mounts) != 0 {
				t.Errorf("mounts = %+v, want none", m.mounts)
			}
			m.checkClean(t)
		})
	}
}

var errFakeMount = errors.New("fake mount failure")

func TestReadDriveFileContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	env := Env{Root: t.TempDir(), Mounter: newDriveMounter(), Logger: localTestLogger(t)}
	start := time.Now()
	_, err := readDriveFile(ctx, env, []string{"config-2"}, "/user_data", 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("readDriveFile(wait 0) = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("readDriveFile took %v after its context ended", d)
	}
}

func TestPollUntil(t *testing.T) {
	calls := 0
	ok, err := pollUntil(context.Background(), time.Second, time.Hour, func() bool { calls++; return false })
	if ok || err != nil {
		t.Errorf("pollUntil(never) = %v, %v, want false, nil", ok, err)
	}
	// The hour-long interval shrinks to a tenth of the timeout: about ten
	// looks in the second. Unshrunk there would be two (the first and the
	// last), so three tells them apart even when a loaded machine delays
	// most of the ticks.
	if calls < 3 {
		t.Errorf("pollUntil checked %d times in 1s, want about 10", calls)
	}
	ok, err = pollUntil(context.Background(), 0, time.Hour, func() bool { return true })
	if !ok || err != nil {
		t.Errorf("pollUntil(at once) = %v, %v, want true, nil", ok, err)
	}
}
