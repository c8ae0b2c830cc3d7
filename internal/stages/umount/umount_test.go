package umount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
)

func ptr[T any](v T) *T { return &v }

// fakeMounts is a mount table: Unmount removes a mounted target, fails
// with EINVAL for one not mounted, and with EBUSY while busy[target] > 0
// (counting down).
type fakeMounts struct {
	mounted map[string]bool
	busy    map[string]int
	calls   []string
}

func (f *fakeMounts) Unmount(target string) error {
	f.calls = append(f.calls, target)
	if f.busy[target] > 0 {
		f.busy[target]--
		return fmt.Errorf("unmount %s: %w", target, syscall.EBUSY)
	}
	if !f.mounted[target] {
		return fmt.Errorf("unmount %s: %w", target, syscall.EINVAL)
	}
	delete(f.mounted, target)
	return nil
}

var testFilesystems = []config.Filesystem{
	{Device: "/dev/a", Format: ptr("ext4"), Path: ptr("/var/lib/data")},
	{Device: "/dev/b", Format: ptr("xfs"), Path: ptr("/var")},
	{Device: "/dev/c", Format: ptr("swap")},
	{Device: "/dev/d", Format: ptr("ext4"), Path: ptr("/home")},
}

func TestRun(t *testing.T) {
	tests := []struct {
		name        string
		mounted     []string
		busy        map[string]int
		wantCalls   []string
		wantErr     string
		wantMounted []string
	}{
		{
			name:      "deepest first",
			mounted:   []string{"/r/var", "/r/var/lib/data", "/r/home"},
			wantCalls: []string{"/r/var/lib/data", "/r/home", "/r/var"},
		},
		{
			name:      "not mounted is skipped",
			mounted:   []string{"/r/var"},
			wantCalls: []string{"/r/var"},
		},
		{
			name:      "nothing mounted",
			wantCalls: nil,
		},
		{
			name:      "busy, then free",
			mounted:   []string{"/r/var", "/r/var/lib/data", "/r/home"},
			busy:      map[string]int{"/r/var/lib/data": 2},
			wantCalls: []string{"/r/var/lib/data", "/r/var/lib/data", "/r/var/lib/data", "/r/home", "/r/var"},
		},
		{
			name:        "busy for good",
			mounted:     []string{"/r/var", "/r/var/lib/data", "/r/home"},
			busy:        map[string]int{"/r/var/lib/data": 100, "/r/var": 100},
			wantCalls:   append(append(slices.Repeat([]string{"/r/var/lib/data"}, Retries), "/r/home"), slices.Repeat([]string{"/r/var"}, Retries)...),
			wantErr:     "filesystem /dev/a on /var/lib/data: unmount /r/var/lib/data: device or resource busy\nfilesystem /dev/b on /var: unmount /r/var: device or resource busy",
			wantMounted: []string{"/r/var", "/r/var/lib/data"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeMounts{mounted: map[string]bool{}, busy: tt.busy}
			for _, p := range tt.mounted {
				m.mounted[p] = true
			}
			info := writeMountInfo(t, tt.mounted)
			err := Run(context.Background(), Deps{Filesystems: testFilesystems, Root: "/r", Unmounter: m, Backoff: time.Microsecond, MountInfo: info})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Run() = %v", err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("Run() = %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" && !errors.Is(err, syscall.EBUSY) {
				t.Errorf("Run() = %v, want errors.Is EBUSY", err)
			}
			if !slices.Equal(m.calls, tt.wantCalls) {
				t.Errorf("Run() unmounted %q, want %q", m.calls, tt.wantCalls)
			}
			var left []string
			for p := range m.mounted {
				left = append(left, p)
			}
			slices.Sort(left)
			if !slices.Equal(left, tt.wantMounted) {
				t.Errorf("Run() left %q mounted, want %q", left, tt.wantMounted)
			}
		})
	}
}

// A cancelled context stops the retries of a busy mount.
func TestRunCancelled(t *testing.T) {
	m := &fakeMounts{mounted: map[string]bool{"/r/home": true}, busy: map[string]int{"/r/home": 100}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Run(ctx, Deps{Filesystems: testFilesystems[3:], Root: "/r", Unmounter: m, Backoff: time.Hour, MountInfo: writeMountInfo(t, []string{"/r/home"})})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "busy") {
		t.Errorf("Run(cancelled) = %v, want context.Canceled after EBUSY", err)
	}
	if len(m.calls) != 1 {
		t.Errorf("Run(cancelled) tried %d times, want 1", len(m.calls))
	}
}

// writeMountInfo writes a mountinfo file listing the mount points (and
// the root), escaped as the kernel does.
func writeMountInfo(t *testing.T, mps []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
	for i, mp := range mps {
		esc := strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, `\`, `\134`).Replace(mp)
		fmt.Fprintf(&b, "%d 22 7:%d / %s rw,relatime shared:%d - ext4 /dev/loop0p%d rw\n", 30+i, i, esc, 2+i, i)
	}
	p := filepath.Join(t.TempDir(), "mountinfo")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMountpoints(t *testing.T) {
	p := writeMountInfo(t, []string{"/sysroot/a b", "/sysroot/tab\there", `/sysroot/back\slash`, "/sysroot/plain"})
	got, err := mountpoints(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/", "/sysroot/a b", "/sysroot/tab\there", `/sysroot/back\slash`, "/sysroot/plain"} {
		if !got[want] {
			t.Errorf("mountpoints() = %v, want %q in it", got, want)
		}
	}
	if len(got) != 5 {
		t.Errorf("mountpoints() = %d entries %v, want 5", len(got), got)
	}
	if _, err := mountpoints(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Errorf("mountpoints(missing) = nil error")
	}
}

// The stage refuses to hand umount2 a path the mount table does not list:
// a target through a symlink could unmount something outside the root.
func TestRunSkipsUnlistedPaths(t *testing.T) {
	m := &fakeMounts{mounted: map[string]bool{"/elsewhere/lib/data": true}}
	err := Run(context.Background(), Deps{
		Filesystems: testFilesystems[:1], Root: "/r", Unmounter: m,
		MountInfo: writeMountInfo(t, []string{"/elsewhere/lib/data"}),
	})
	if err != nil || len(m.calls) != 0 {
		t.Errorf("Run() = %v and unmounted %q, want nothing unmounted", err, m.calls)
	}
}
