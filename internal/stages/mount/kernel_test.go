//go:build unix

package mount

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
)

// devInfo is a file that stat reports as a block device.
type devInfo struct{ fs.FileInfo }

func (devInfo) Mode() fs.FileMode { return fs.ModeDevice | 0o660 }

// blockDevices is a stat that reports the files in devs as block
// devices, and everything else as it is.
func blockDevices(devs ...string) func(string) (fs.FileInfo, error) {
	return func(p string) (fs.FileInfo, error) {
		fi, err := os.Stat(p)
		if err == nil && slices.Contains(devs, p) {
			return devInfo{fi}, nil
		}
		return fi, err
	}
}

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mklink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// fakeHost lays out a system under a temporary directory: block devices
// vdb1 (linked from by-partlabel/www), dm-3 (named luks-root, with its
// /dev/mapper node) and dm-4 (named gone, without one), a regular file,
// a helper mount.xfs, and the mountpoint root/srv/www (also reached
// through the symlink rootlink).
func fakeHost(t *testing.T) (dir string, h host) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dev/vdb1", "dev/dm-3", "dev/dm-4", "dev/regular", "helpers/mount.xfs", "dev/mapper/luks-root"} {
		mkfile(t, filepath.Join(dir, d), "")
	}
	mklink(t, "../../vdb1", filepath.Join(dir, "dev/disk/by-partlabel/www"))
	mkfile(t, filepath.Join(dir, "sys/class/block/dm-3/dm/name"), "luks-root\n")
	mkfile(t, filepath.Join(dir, "sys/class/block/dm-4/dm/name"), "gone\n")
	if err := os.MkdirAll(filepath.Join(dir, "root/srv/www"), 0o755); err != nil {
		t.Fatal(err)
	}
	mklink(t, "root", filepath.Join(dir, "rootlink"))
	return dir, host{
		helperDirs: []string{filepath.Join(dir, "nohelpers"), filepath.Join(dir, "helpers")},
		mtab:       filepath.Join(dir, "etc/mtab"),
		kernel: blockdev.Kernel{
			SysDir: filepath.Join(dir, "sys"),
			DevDir: filepath.Join(dir, "dev"),
			Stat:   blockDevices(filepath.Join(dir, "dev/vdb1"), filepath.Join(dir, "dev/dm-3"), filepath.Join(dir, "dev/dm-4")),
		},
	}
}

func TestPlanKernelMount(t *testing.T) {
	dir, h := fakeHost(t)
	target := filepath.Join(dir, "root/srv/www")
	tests := []struct {
		name   string
		fs     config.Filesystem
		target string
		want   kernelMount
	}{
		{
			name: "a link to a partition",
			fs:   config.Filesystem{Device: dir + "/dev/disk/by-partlabel/www", Format: ptr("ext4"), MountOptions: []string{"noatime", "commit=30"}},
			want: kernelMount{source: dir + "/dev/vdb1", target: target, fstype: "ext4", flags: msNoatime, data: "commit=30"},
		},
		{
			name: "no options",
			fs:   config.Filesystem{Device: dir + "/dev/vdb1", Format: ptr("btrfs")},
			want: kernelMount{source: dir + "/dev/vdb1", target: target, fstype: "btrfs"},
		},
		{
			name:   "a mountpoint through a symlink",
			fs:     config.Filesystem{Device: dir + "/dev/vdb1", Format: ptr("vfat"), MountOptions: []string{"ro", "umask=077"}},
			target: dir + "/rootlink/srv/www",
			want:   kernelMount{source: dir + "/dev/vdb1", target: target, fstype: "vfat", flags: msRdonly, data: "umask=077"},
		},
		{
			name: "a device-mapper device",
			fs:   config.Filesystem{Device: dir + "/dev/dm-3", Format: ptr("ext4")},
			want: kernelMount{source: dir + "/dev/mapper/luks-root", target: target, fstype: "ext4"},
		},
		{
			name: "a device-mapper device without its /dev/mapper node",
			fs:   config.Filesystem{Device: dir + "/dev/dm-4", Format: ptr("ext4")},
			want: kernelMount{source: dir + "/dev/dm-4", target: target, fstype: "ext4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tgt := tt.target
			if tgt == "" {
				tgt = target
			}
			got, why := planKernelMount(tt.fs, tgt, h)
			if why != "" || got != tt.want {
				t.Errorf("planKernelMount(%s) = %+v, %q, want %+v", tt.fs.Device, got, why, tt.want)
			}
		})
	}
}

// TestPlanKernelMountFallback: every reason for mount(8).
func TestPlanKernelMountFallback(t *testing.T) {
	dir, h := fakeHost(t)
	target := filepath.Join(dir, "root/srv/www")
	tests := []struct {
		name    string
		fs      config.Filesystem
		target  string
		mtab    string
		wantWhy string
	}{
		{
			name:    "virtiofs",
			fs:      config.Filesystem{Device: "share", Format: ptr("virtiofs")},
			wantWhy: "the format virtiofs is not one flint mounts itself",
		},
		{
			name:    "a helper",
			fs:      config.Filesystem{Device: dir + "/dev/vdb1", Format: ptr("xfs")},
			wantWhy: "mount(8) would run " + dir + "/helpers/mount.xfs",
		},
		{
			name:    "a userspace option",
			fs:      config.Filesystem{Device: dir + "/dev/vdb1", Format: ptr("ext4"), MountOptions: []string{"noatime", "x-systemd.automount"}},
			wantWhy: "the mount option x-systemd.automount is mount(8)'s",
		},
		{
			name:    "a regular /etc/mtab",
			fs:      config.Filesystem{Device: dir + "/dev/vdb1", Format: ptr("ext4")},
			mtab:    "dev/regular",
			wantWhy: dir + "/dev/regular is a file mount(8) may write",
		},
		{
			name:    "not a path",
			fs:      config.Filesystem{Device: "LABEL=www", Format: ptr("ext4")},
			wantWhy: "the device LABEL=www is not a path",
		},
		{
			name:    "no device",
			fs:      config.Filesystem{Device: dir + "/dev/vdc", Format: ptr("ext4")},
			wantWhy: "the device: lstat " + dir + "/dev/vdc: no such file or directory",
		},
		{
			name:    "a regular file",
			fs:      config.Filesystem{Device: dir + "/dev/regular", Format: ptr("ext4")},
			wantWhy: dir + "/dev/regular is not a block device",
		},
		{
			name:    "a directory",
			fs:      config.Filesystem{Device: dir + "/dev", Format: ptr("ext4")},
			wantWhy: dir + "/dev is not a block device",
		},
		{
			name:    "no mountpoint",
			fs:      config.Filesystem{Device: dir + "/dev/vdb1", Format: ptr("ext4")},
			target:  dir + "/root/nowhere",
			wantWhy: "resolving the mountpoint: lstat " + dir + "/root/nowhere: no such file or directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tgt := tt.target
			if tgt == "" {
				tgt = target
			}
			h := h
			if tt.mtab != "" {
				h.mtab = filepath.Join(dir, tt.mtab)
			}
			got, why := planKernelMount(tt.fs, tgt, h)
			if why != tt.wantWhy {
				t.Errorf("planKernelMount(%s) = %+v, %q, want mount(8): %q", tt.fs.Device, got, why, tt.wantWhy)
			}
		})
	}
}
