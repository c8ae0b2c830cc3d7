package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mountForTest mounts a tmpfs (or, with bind, binds from) at dir for the
// test, or skips when this process may not mount.
func mountForTest(t *testing.T, dir, from string) {
	t.Helper()
	var err error
	if from == "" {
		err = unix.Mount("flint-test", dir, "tmpfs", 0, "size=1m")
	} else {
		err = unix.Mount(from, dir, "", unix.MS_BIND, "")
	}
	if errors.Is(err, unix.EPERM) {
		t.Skipf("mounting needs root (CAP_SYS_ADMIN): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// TestRemoveAllStopsAtMounts: RemoveAll never deletes into another
// filesystem (a tmpfs, a bind mount of the same filesystem) and refuses
// before deleting anything, rather than half way with EBUSY.
func TestRemoveAllStopsAtMounts(t *testing.T) {
	for _, bind := range []bool{false, true} {
		name := "tmpfs"
		if bind {
			name = "bind"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range []string{"var/a", "var/lib/mnt", "var/z", "elsewhere"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"var/a/f", "var/z/f", "elsewhere/kept"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			from := ""
			if bind {
				from = filepath.Join(dir, "elsewhere")
			}
			mountForTest(t, filepath.Join(dir, "var/lib/mnt"), from)
			if !bind {
				os.WriteFile(filepath.Join(dir, "var/lib/mnt/kept"), []byte("x"), 0o644)
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, p := range []string{"/var", "/var/lib/mnt"} {
				err := r.RemoveAll(p)
				if !errors.Is(err, ErrMountPoint) {
					t.Fatalf("RemoveAll(%s) = %v, want ErrMountPoint", p, err)
				}
				if want := "/var/lib/mnt: " + ErrMountPoint.Error(); !strings.Contains(err.Error(), want) {
					t.Errorf("RemoveAll(%s) = %q, want it to name the mount point: %q", p, err, want)
				}
			}
			for _, f := range []string{"var/a/f", "var/z/f", "var/lib/mnt/kept", "elsewhere/kept"} {
				if _, err := os.Lstat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s is gone: RemoveAll deleted before refusing", f)
				}
			}
			// Without the mount, the same tree goes.
			if err := r.RemoveAll("/var/a"); err != nil {
				t.Errorf("RemoveAll(/var/a) = %v", err)
			}
		})
	}
}
