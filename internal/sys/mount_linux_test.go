package sys

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMounter mounts a read-only tmpfs for real; it needs root (or
// CAP_SYS_ADMIN) and skips without it.
func TestMounter(t *testing.T) {
	dir := t.TempDir()
	m := Mounter{}
	err := m.Mount("flint-test", dir, "tmpfs", syscall.MS_RDONLY, "size=1m")
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("cannot mount here (needs root): %v", err)
	}
	if err != nil {
		t.Fatalf("Mount(tmpfs) = %v", err)
	}
	werr := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o600)
	if err := m.Unmount(dir); err != nil {
		t.Fatalf("Unmount(%s) = %v", dir, err)
	}
	if !errors.Is(werr, syscall.EROFS) {
		t.Errorf("writing to the read-only mount = %v, want EROFS", werr)
	}
	if err := m.Unmount(dir); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Unmount(not mounted) = %v, want EINVAL", err)
	}
}
