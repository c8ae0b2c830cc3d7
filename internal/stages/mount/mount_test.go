//go:build unix

package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"

	"github.com/flintboot/flint/internal/selinux"
)

func ptr[T any](v T) *T { return &v }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// fakeRunner records every command; mount fails for the devices in
// fail, and a mount "fills" the target with a file unless the device is
// in fresh, so the freshness check sees a used filesystem.
type fakeRunner struct {
	root  string
	calls []string
	fail  map[string]bool
	fresh map[string]bool
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	f.calls = append(f.calls, strings.ReplaceAll(strings.Join(argv, " "), f.root, "<root>"))
	if name == "mount" {
		dev, target := args[len(args)-2], args[len(args)-1]
		if f.fail[dev] {
			return nil, &sys.CommandError{Argv: argv, ExitCode: 32, Stderr: "mount: wrong fs type"}
		}
		if !f.fresh[dev] {
			if err := os.WriteFile(filepath.Join(target, "used"), nil, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

func TestMountable(t *testing.T) {
	fss := []config.Filesystem{
		{Device: "/dev/a", Format: ptr("ext4"), Path: ptr("/var/lib/data")},
		{Device: "/dev/b", Format: ptr("xfs"), Path: ptr("/var")},
		{Device: "/dev/c", Format: ptr("swap"), Path: ptr("/swap")},
		{Device: "/dev/d", Format: ptr("none"), Path: ptr("/none")},
		{Device: "/dev/e", Format: ptr("ext4")},
		{Device: "/dev/f", Path: ptr("/noformat")},
		{Device: "/dev/g", Format: ptr(""), Path: ptr("/emptyformat")},
		{Device: "/dev/h", Format: ptr("ext4"), Path: ptr("/home/")},
		{Device: "/dev/i", Format: ptr("vfat"), Path: ptr("/boot/efi")},
	}
	var got []string
	for _, f := range Mountable(fss) {
		got = append(got, f.Device)
	}
	if want := []string{"/dev/b", "/dev/h", "/dev/i", "/dev/a"}; !slices.Equal(got, want) {
		t.Errorf("Mountable() = %q, want %q", got, want)
	}
}

func TestRun(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "var"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	r := &fakeRunner{root: root}
	created, err := Run(context.Background(), Deps{
		Root:   root,
		Logger: testLogger(t),
		Runner: r,
		Filesystems: []config.Filesystem{
			{Device: "/dev/a", Format: ptr("ext4"), Path: ptr("/var/lib/data"), MountOptions: []string{"noatime", "discard"}},
			{Device: "/dev/b", Format: ptr("xfs"), Path: ptr("/var")},
			{Device: "/dev/c", Format: ptr("swap")},
			{Device: "tag", Format: ptr("virtiofs"), Path: ptr("/srv/share")},
		},
	})
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	wantCalls := []string{
		"mount -t xfs /dev/b <root>/var",
		"mount -t virtiofs tag <root>/srv/share",
		"mount -t ext4 -o noatime,discard /dev/a <root>/var/lib/data",
	}
	if !slices.Equal(r.calls, wantCalls) {
		t.Errorf("Run() ran %q, want %q", r.calls, wantCalls)
	}
	if want := []string{"/srv", "/srv/share", "/var/lib", "/var/lib/data"}; !slices.Equal(created, want) {
		t.Errorf("Run() created = %q, want %q", created, want)
	}
	for _, p := range created {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
			t.Errorf("mountpoint %s = %v, %v, want a directory 0755", p, fi, err)
		}
	}
}

func TestRunRefuses(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(t *testing.T, root string)
		fs        config.Filesystem
		wantIs    error
		wantIn    string
		wantCalls int
	}{
		{
			name: "symlinked mountpoint",
			setup: func(t *testing.T, root string) {
				if err := os.Symlink("/elsewhere", filepath.Join(root, "var")); err != nil {
					t.Fatal(err)
				}
			},
			fs:     config.Filesystem{Device: "/dev/a", Format: ptr("ext4"), Path: ptr("/var/lib")},
			wantIs: ErrSymlink,
			wantIn: "filesystem /dev/a on /var/lib: /var (to /elsewhere) is a symlink",
		},
		{
			name: "symlink as the last component",
			setup: func(t *testing.T, root string) {
				if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("real", filepath.Join(root, "data")); err != nil {
					t.Fatal(err)
				}
			},
			fs:     config.Filesystem{Device: "/dev/a", Format: ptr("ext4"), Path: ptr("/data")},
			wantIs: ErrSymlink,
			wantIn: "/data (to real) is a symlink",
		},
		{
			name: "file in the way",
			setup: func(t *testing.T, root string) {
				if err := os.WriteFile(filepath.Join(root, "srv"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			fs:     config.Filesystem{Device: "/dev/a", Format: ptr("ext4"), Path: ptr("/srv/x")},
			wantIs: ErrNotDirectory,
			wantIn: "/srv (----------) is not a directory",
		},
		{
			name:      "mount fails",
			fs:        config.Filesystem{Device: "/dev/bad", Format: ptr("ext4"), Path: ptr("/x")},
			wantIn:    "filesystem /dev/bad on /x: mount -t ext4 /dev/bad",
			wantCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, root)
			}
			r := &fakeRunner{root: root, fail: map[string]bool{"/dev/bad": true}}
			_, err := Run(context.Background(), Deps{Root: root, Logger: testLogger(t), Runner: r, Filesystems: []config.Filesystem{tt.fs}})
			if err == nil {
				t.Fatalf("Run() = nil, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Run() = %v, want errors.Is %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Run() = %q, want it to contain %q", err, tt.wantIn)
			}
			if len(r.calls) != tt.wantCalls {
				t.Errorf("Run() ran %q, want %d commands", r.calls, tt.wantCalls)
			}
			if _, err := os.Stat("/elsewhere"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Run() left /elsewhere on the host: %v", err)
			}
		})
	}
}

func TestRunSELinux(t *testing.T) {
	tests := []struct {
		name      string
		config    string
		wantCalls []string
		wantErr   string
	}{
		{
			name:   "enforcing",
			config: "# comment\nSELINUX=enforcing\nSELINUXTYPE=targeted\n",
			wantCalls: []string{
				"mount -t ext4 /dev/used <root>/etc",
				"setfiles -F -r <root> <root>/etc/selinux/targeted/contexts/files/file_contexts <root>/new <root>/new/fs",
				"mount -t ext4 /dev/fresh <root>/new/fs",
				"setfiles -F -r <root> <root>/etc/selinux/targeted/contexts/files/file_contexts <root>/new/fs",
			},
		},
		{
			name:      "disabled",
			config:    "SELINUX=disabled\nSELINUXTYPE=targeted\n",
			wantCalls: []string{"mount -t ext4 /dev/used <root>/etc", "mount -t ext4 /dev/fresh <root>/new/fs"},
		},
		{
			name:      "no config",
			wantCalls: []string{"mount -t ext4 /dev/used <root>/etc", "mount -t ext4 /dev/fresh <root>/new/fs"},
		},
		{
			name:    "no policy type",
			config:  "SELINUX=permissive\n",
			wantErr: "names no usable SELINUXTYPE",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.config != "" {
				if err := os.MkdirAll(filepath.Join(root, "etc/selinux"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, selinux.ConfigPath), []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := &fakeRunner{root: root, fresh: map[string]bool{"/dev/fresh": true}}
			_, err := Run(context.Background(), Deps{Root: root, Logger: testLogger(t), Runner: r, Filesystems: []config.Filesystem{
				{Device: "/dev/fresh", Format: ptr("ext4"), Path: ptr("/new/fs")},
				{Device: "/dev/used", Format: ptr("ext4"), Path: ptr("/etc")},
			}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Run() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run() = %v", err)
			}
			if !slices.Equal(r.calls, tt.wantCalls) {
				t.Errorf("Run() ran\n%s\nwant\n%s", strings.Join(r.calls, "\n"), strings.Join(tt.wantCalls, "\n"))
			}
		})
	}
}

// fakeMounter records every mount(2) call; it fails with EINVAL for the
// sources in fail, and fills the target like fakeRunner.
type fakeMounter struct {
	root  string
	calls []string
	fail  map[string]bool
}

func (f *fakeMounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	f.calls = append(f.calls, strings.ReplaceAll(fmt.Sprintf("%s %s %s %#x %q", source, target, fstype, flags, data), f.root, "<root>"))
	if f.fail[source] {
		return fmt.Errorf("mount %s (%s) on %s: %w", source, fstype, target, syscall.EINVAL)
	}
	return os.WriteFile(filepath.Join(target, "used"), nil, 0o644)
}

// TestRunKernel mounts with mount(2) what mount(8) would, and with mount(8)
// the rest and what mount(2) refused; the log says which mounted each.
func TestRunKernel(t *testing.T) {
	dir, h := fakeHost(t)
	mkfile(t, filepath.Join(dir, "dev/vdc1"), "")
	h.kernel.Stat = blockDevices(dir+"/dev/vdb1", dir+"/dev/vdc1")
	root := filepath.Join(dir, "root")
	var log bytes.Buffer
	r := &fakeRunner{root: dir}
	m := &fakeMounter{root: dir, fail: map[string]bool{dir + "/dev/vdc1": true}}
	_, err := Run(context.Background(), Deps{
		Root:    root,
		Logger:  slog.New(slog.NewTextHandler(io.MultiWriter(&log, t.Output()), nil)),
		Runner:  r,
		Mounter: m,
		host:    h,
		Filesystems: []config.Filesystem{
			{Device: dir + "/dev/disk/by-partlabel/www", Format: ptr("ext4"), Path: ptr("/srv/www"), MountOptions: []string{"nodev", "commit=30"}},
			{Device: dir + "/dev/vdb1", Format: ptr("ext4"), Path: ptr("/a"), MountOptions: []string{"x-initrd.mount"}},
			{Device: dir + "/dev/vdc1", Format: ptr("ext4"), Path: ptr("/b"), MountOptions: []string{"ro"}},
			{Device: dir + "/dev/vdb1", Format: ptr("xfs"), Path: ptr("/c")},
		},
	})
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	wantKernel := []string{
		`<root>/dev/vdc1 <root>/root/b ext4 0x1 ""`,
		`<root>/dev/vdb1 <root>/root/srv/www ext4 0x4 "commit=30"`,
	}
	if !slices.Equal(m.calls, wantKernel) {
		t.Errorf("Run() called mount(2) with\n%s\nwant\n%s", strings.Join(m.calls, "\n"), strings.Join(wantKernel, "\n"))
	}
	wantCalls := []string{
		"mount -t ext4 -o x-initrd.mount <root>/dev/vdb1 <root>/root/a",
		"mount -t ext4 -o ro <root>/dev/vdc1 <root>/root/b",
		"mount -t xfs <root>/dev/vdb1 <root>/root/c",
	}
	if !slices.Equal(r.calls, wantCalls) {
		t.Errorf("Run() ran\n%s\nwant\n%s", strings.Join(r.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	for _, want := range []string{
		`"[started] mounting ` + dir + `/dev/disk/by-partlabel/www on /srv/www: mount(2) ` + dir + `/dev/vdb1 on ` + root + `/srv/www (ext4), flags nodev, data commit=30"`,
		`"[finished] mounting ` + dir + `/dev/disk/by-partlabel/www on /srv/www: mount(2) ` + dir + `/dev/vdb1 on ` + root + `/srv/www (ext4), flags nodev, data commit=30" op=mount`,
		`on /a with mount(8), since the mount option x-initrd.mount is mount(8)'s: mount -t ext4 -o x-initrd.mount`,
		`msg="mount(2) failed: mounting with mount(8), whose error is the one reported: mount -t ext4 -o ro ` + dir + `/dev/vdc1 ` + root + `/b" op=mount error="mount ` + dir + `/dev/vdc1 (ext4) on ` + root + `/b: invalid argument"`,
		`on /c with mount(8), since mount(8) would run ` + dir + `/helpers/mount.xfs: mount -t xfs`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("Run() logged\n%s\nwant a line containing\n%s", log.String(), want)
		}
	}
	if got := strings.Count(log.String(), "with=mount(2)"); got != 1 {
		t.Errorf("Run() logged %d mounts with=mount(2), want 1", got)
	}
	if got := strings.Count(log.String(), "with=mount(8)"); got != 3 {
		t.Errorf("Run() logged %d mounts with=mount(8), want 3", got)
	}
}

// TestRunKernelFails: when mount(2) and mount(8) both fail, the error is
// mount(8)'s, as before the stage used mount(2).
func TestRunKernelFails(t *testing.T) {
	dir, h := fakeHost(t)
	h.kernel.Stat = blockDevices(dir + "/dev/bad")
	mkfile(t, filepath.Join(dir, "dev/bad"), "")
	r := &fakeRunner{root: dir, fail: map[string]bool{dir + "/dev/bad": true}}
	m := &fakeMounter{root: dir, fail: map[string]bool{dir + "/dev/bad": true}}
	_, err := Run(context.Background(), Deps{
		Root: filepath.Join(dir, "root"), Logger: testLogger(t), Runner: r, Mounter: m, host: h,
		Filesystems: []config.Filesystem{{Device: dir + "/dev/bad", Format: ptr("ext4"), Path: ptr("/x"), MountOptions: []string{"flint_not_an_option"}}},
	})
	var ce *sys.CommandError
	want := "filesystem " + dir + "/dev/bad on /x: mount -t ext4 -o flint_not_an_option " + dir + "/dev/bad " + dir + "/root/x: exit status 32: mount: wrong fs type"
	if !errors.As(err, &ce) || err.Error() != want {
		t.Errorf("Run() = %v, want mount(8)'s error %q", err, want)
	}
	if len(m.calls) != 1 || len(r.calls) != 1 {
		t.Errorf("Run() called mount(2) %q and ran %q, want one of each", m.calls, r.calls)
	}
}
