//go:build linux

package platform

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kernelMounter mounts for real (tests only: the binary's Mounter lives in
// internal/sys).
type kernelMounter struct{ mounted []string }

func (m *kernelMounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	if err := syscall.Mount(source, target, fstype, flags, data); err != nil {
		return err
	}
	m.mounted = append(m.mounted, target)
	return nil
}

func (m *kernelMounter) Unmount(target string) error { return syscall.Unmount(target, 0) }

// loopDevice attaches img to a free loop device and detaches it when the
// test ends. It skips the test when that is not possible here.
func loopDevice(t *testing.T, img string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("attaching a loop device needs root")
	}
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		t.Skip("losetup is not installed")
	}
	out, err := exec.Command(losetup, "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("no loop device available: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(losetup, "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// TestReadDriveFileKernelMount reads user-data from real ext4 and vfat
// config drives on loop devices through mount(2): the probe's answer must
// be a filesystem type the kernel accepts. Root only.
func TestReadDriveFileKernelMount(t *testing.T) {
	const userData = `{"ignition":{"version":"3.4.0"}}`
	tests := []struct {
		name string
		make func(t *testing.T, img string)
	}{
		{"ext4", func(t *testing.T, img string) {
			src := t.TempDir()
			p := filepath.Join(src, "openstack", "latest", "user_data")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(userData), 0o644); err != nil {
				t.Fatal(err)
			}
			runTool(t, "mkfs.ext4", "-q", "-F", "-L", "config-2", "-d", src, img)
		}},
		{"vfat", func(t *testing.T, img string) {
			runTool(t, "mkfs.vfat", "-n", "CONFIG-2", img)
			// No mtools here: fill the filesystem through a read-write
			// mount of its own.
			dev := loopDevice(t, img)
			mnt := t.TempDir()
			if err := syscall.Mount(dev, mnt, "vfat", 0, ""); err != nil {
				t.Skipf("mounting vfat: %v", err)
			}
			p := filepath.Join(mnt, "openstack", "latest", "user_data")
			err := os.MkdirAll(filepath.Dir(p), 0o755)
			if err == nil {
				err = os.WriteFile(p, []byte(userData), 0o644)
			}
			if uerr := syscall.Unmount(mnt, 0); uerr != nil {
				t.Fatal(uerr)
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("mounting needs root")
			}
			img := filepath.Join(t.TempDir(), "drive.img")
			if err := os.WriteFile(img, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(img, 8<<20); err != nil {
				t.Fatal(err)
			}
			tt.make(t, img)
			dev := loopDevice(t, img)

			root := t.TempDir()
			byLabel := filepath.Join(root, byLabelDir, "config-2")
			if err := os.MkdirAll(filepath.Dir(byLabel), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(dev, byLabel); err != nil {
				t.Fatal(err)
			}
			m := &kernelMounter{}
			env := Env{Root: root, Mounter: m, Logger: localTestLogger(t)}
			got, err := readDriveFile(context.Background(), env, []string{"config-2"}, "/openstack/latest/user_data", time.Second)
			if err != nil || string(got) != userData {
				t.Errorf("readDriveFile(%s) = %q, %v, want %q", tt.name, got, err, userData)
			}
			for _, mnt := range m.mounted {
				if _, err := os.Stat(mnt); !os.IsNotExist(err) {
					t.Errorf("mount point %s left behind", mnt)
				}
			}
		})
	}
}

func runTool(t *testing.T, name string, args ...string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
