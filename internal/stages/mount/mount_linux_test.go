package mount

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// ext4Loop makes an ext4 image of 32 MiB and attaches it to a free loop
// device (read-only when ro), detached when the test ends. It skips
// without root, losetup or mkfs.ext4.
func ext4Loop(t *testing.T, ro bool) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create loop devices and mount (make test runs it as root)")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	img := filepath.Join(t.TempDir(), "ext4.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	args := []string{"-f", "--show", img}
	if ro {
		args = append([]string{"-r"}, args...)
	}
	out, err := exec.Command("losetup", args...).Output()
	if err != nil {
		t.Skipf("losetup %s: %v", strings.Join(args, " "), err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// mountEntry is what /proc/self/mountinfo says of a mount
// (proc_pid_mountinfo(5)): its source, mount options, type and
// superblock options.
type mountEntry struct{ source, options, fstype, super string }

// mountedAt reads the entry of the mount on target, failing when there is
// not exactly one.
func mountedAt(t *testing.T, target string) mountEntry {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var found []mountEntry
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[4] != target {
			continue
		}
		sep := 6
		for sep < len(f) && f[sep] != "-" {
			sep++
		}
		if sep+3 >= len(f) {
			t.Fatalf("mountinfo line %q: no separator", line)
		}
		found = append(found, mountEntry{source: f[sep+2], options: f[5], fstype: f[sep+1], super: f[sep+3]})
	}
	if len(found) != 1 {
		t.Fatalf("mountinfo lists %d mounts on %s, want 1: %+v", len(found), target, found)
	}
	return found[0]
}

// TestKernelMountLikeMount8 mounts an ext4 image on a loop device, through
// a symlink as the config's /dev/disk links are, once with mount(2) and
// once with mount(8) only, and compares what mountinfo shows: the source
// (canonical), the mount's options, the type and the superblock's
// options must be the same.
func TestKernelMountLikeMount8(t *testing.T) {
	dev := ext4Loop(t, false)
	link := filepath.Join(t.TempDir(), "by-partlabel-www")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	tests := [][]string{
		nil,
		{"defaults"},
		{"ro"},
		{"noatime", "nodev"},
		{"rw,ro", "nosuid", "noexec"},
		{"relatime", "lazytime", "commit=30"},
		{"sync", "dirsync", "user_xattr", "errors=remount-ro"},
		{"strictatime", "nodiratime", "silent"},
		{"noatime", "atime", "nodev", "dev", "data=journal"},
	}
	for _, opts := range tests {
		t.Run(strings.Join(opts, ","), func(t *testing.T) {
			var got [2]mountEntry
			for i, mounter := range []Mounter{sys.Mounter{}, nil} {
				root := t.TempDir()
				var log bytes.Buffer
				_, err := Run(context.Background(), Deps{
					Root:        root,
					Logger:      slog.New(slog.NewTextHandler(io.MultiWriter(&log, t.Output()), nil)),
					Runner:      sys.Runner{},
					Mounter:     mounter,
					Filesystems: []config.Filesystem{{Device: link, Format: ptr("ext4"), Path: ptr("/srv/www"), MountOptions: opts}},
				})
				if err != nil {
					t.Fatalf("Run(%q) = %v", opts, err)
				}
				target := filepath.Join(root, "srv/www")
				got[i] = mountedAt(t, target)
				if err := (sys.Mounter{}).Unmount(target); err != nil {
					t.Fatal(err)
				}
				want := []string{"with=mount(2)", "with=mount(8)"}[i]
				if !strings.Contains(log.String(), want) {
					t.Errorf("Run(%q) logged\n%s\nwant %s", opts, log.String(), want)
				}
			}
			if got[0] != got[1] {
				t.Errorf("mountinfo after mount(2) = %+v, after mount(8) %+v, want the same", got[0], got[1])
			}
			if got[0].source != dev {
				t.Errorf("mountinfo's source = %s, want %s (the link resolved)", got[0].source, dev)
			}
		})
	}
}

// TestKernelMountFallsBack: what mount(2) refuses, mount(8) mounts or
// reports: a read-only device mounted read-write (mount(8) retries it
// read-only), and an option ext4 does not know (mount(8)'s error).
func TestKernelMountFallsBack(t *testing.T) {
	t.Run("read-only device", func(t *testing.T) {
		dev := ext4Loop(t, true)
		root := t.TempDir()
		var log bytes.Buffer
		_, err := Run(context.Background(), Deps{
			Root:        root,
			Logger:      slog.New(slog.NewTextHandler(io.MultiWriter(&log, t.Output()), nil)),
			Runner:      sys.Runner{},
			Mounter:     sys.Mounter{},
			Filesystems: []config.Filesystem{{Device: dev, Format: ptr("ext4"), Path: ptr("/ro")}},
		})
		if err != nil {
			t.Fatalf("Run() = %v", err)
		}
		target := filepath.Join(root, "ro")
		got := mountedAt(t, target)
		if err := (sys.Mounter{}).Unmount(target); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got.options, "ro,") && got.options != "ro" {
			t.Errorf("mountinfo's options = %s, want ro (mount(8)'s retry)", got.options)
		}
		for _, want := range []string{"mount(2) failed", "with=mount(8)"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("Run() logged\n%s\nwant %q", log.String(), want)
			}
		}
	})
	t.Run("unknown option", func(t *testing.T) {
		dev := ext4Loop(t, false)
		root := t.TempDir()
		_, err := Run(context.Background(), Deps{
			Root:        root,
			Logger:      testLogger(t),
			Runner:      sys.Runner{},
			Mounter:     sys.Mounter{},
			Filesystems: []config.Filesystem{{Device: dev, Format: ptr("ext4"), Path: ptr("/x"), MountOptions: []string{"flint_not_an_option"}}},
		})
		want := "filesystem " + dev + " on /x: mount -t ext4 -o flint_not_an_option " + dev + " " + filepath.Join(root, "x") + ": exit status 32: "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Run() = %v, want mount(8)'s error, starting %q", err, want)
		}
	})
}
