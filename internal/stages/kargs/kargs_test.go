package kargs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// fakeMachine stands for the block devices and the mount table: each
// device's filesystem is a directory on disk; mount copies it onto the
// mountpoint, umount copies it back and empties the mountpoint, so what
// the stage wrote while mounted is what the "device" holds afterwards.
type fakeMachine struct {
	t       *testing.T
	devices map[string]string // device → its filesystem's contents
	labels  map[string]string // device → label
	mounted map[string]string // mountpoint → device
	calls   []string
	helper  string // the helper's path; running it succeeds unless failHelper
	// failures
	failHelper, failMount, failUmount, failBlkid bool
	// unseen is how many more blkid calls find no label: the boot disk
	// is not there yet.
	unseen int
}

func newFakeMachine(t *testing.T) *fakeMachine {
	return &fakeMachine{t: t, devices: map[string]string{}, labels: map[string]string{}, mounted: map[string]string{}}
}

// addDevice makes a device holding files (path → contents).
func (m *fakeMachine) addDevice(dev, label string, files map[string]string) string {
	dir := m.t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			m.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			m.t.Fatal(err)
		}
	}
	m.devices[dev] = dir
	m.labels[dev] = label
	return dir
}

func (m *fakeMachine) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	call := strings.Join(argv, " ")
	for mp := range m.mounted {
		call = strings.ReplaceAll(call, mp, "<dir>")
	}
	m.calls = append(m.calls, call)
	fail := func(code int, msg string) error {
		return &sys.CommandError{Argv: argv, ExitCode: code, Stderr: msg}
	}
	switch {
	case name == m.helper && m.helper != "":
		if m.failHelper {
			return nil, fail(1, "not supported by this Linux distribution")
		}
		return nil, nil
	case name == "blkid":
		if m.failBlkid {
			return nil, fail(4, "usage")
		}
		if m.unseen > 0 {
			m.unseen--
			return nil, fail(2, "")
		}
		want := strings.TrimPrefix(args[len(args)-1], "LABEL=")
		var out []string
		for dev, l := range m.labels {
			if l == want {
				out = append(out, dev)
			}
		}
		if len(out) == 0 {
			return nil, fail(2, "")
		}
		slices.Sort(out)
		return []byte(strings.Join(out, "\n") + "\n"), nil
	case name == "mount" && len(args) == 4 && args[0] == "-o" && args[1] == "rw":
		dev, dir := args[2], args[3]
		m.calls[len(m.calls)-1] = strings.ReplaceAll(call, dir, "<dir>")
		src, ok := m.devices[dev]
		if m.failMount || !ok {
			return nil, fail(32, "mount: special device "+dev+" does not exist")
		}
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			return nil, err
		}
		m.mounted[dir] = dev
		return nil, nil
	case name == "umount" && len(args) == 1:
		dir := args[0]
		dev, ok := m.mounted[dir]
		if !ok {
			return nil, fail(32, "umount: not mounted")
		}
		if m.failUmount {
			return nil, fail(32, "umount: target is busy")
		}
		src := m.devices[dev]
		if err := os.RemoveAll(src); err != nil {
			return nil, err
		}
		if err := os.CopyFS(src, os.DirFS(dir)); err != nil {
			return nil, err
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
		delete(m.mounted, dir)
		return nil, nil
	}
	return nil, fail(-1, "unexpected command")
}

const (
	entryA = "title Debian\nversion 6.12\nlinux /vmlinuz-6.12\ninitrd /initrd.img-6.12\noptions root=UUID=1234 ro console=tty0\n"
	entryB = "title Debian (rescue)\n# a comment\nlinux /vmlinuz-6.11\noptions root=UUID=1234 ro\noptions single\n"
	entryC = "title No options\nlinux /vmlinuz-6.10\n"
)

func bootFiles() map[string]string {
	return map[string]string{
		"loader/entries/a.conf": entryA,
		"loader/entries/b.conf": entryB,
		"loader/entries/c.conf": entryC,
		"loader/entries/readme": "not an entry",
		"grub/grub.cfg":         "# untouched\n",
	}
}

func read(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRunBuiltIn(t *testing.T) {
	m := newFakeMachine(t)
	disk := m.addDevice("/dev/vda2", "boot", bootFiles())
	m.addDevice("/dev/vda3", "root", nil)
	tmp := t.TempDir()
	flag := filepath.Join(t.TempDir(), "run/kargs-reboot")
	reboots := 0
	d := Deps{
		Args: config.KernelArguments{
			ShouldExist:    []string{"quiet", "console=ttyS0,115200n8 console=tty0"},
			ShouldNotExist: []string{"single", "console=ttyS1"},
		},
		Logger:     testLogger(t),
		Runner:     m,
		DevDir:     t.TempDir(),
		TempDir:    tmp,
		RebootFlag: flag,
		Reboot:     func(context.Context) error { reboots++; return nil },
	}
	changed, err := Run(context.Background(), d)
	if err != nil || !changed {
		t.Fatalf("Run() = %v, %v, want true, nil", changed, err)
	}
	wantCalls := []string{
		"blkid -c /dev/null -o device -t LABEL=boot",
		"mount -o rw /dev/vda2 <dir>",
		"umount <dir>",
	}
	if !slices.Equal(m.calls, wantCalls) {
		t.Errorf("Run() ran %q, want %q", m.calls, wantCalls)
	}
	// a.conf has console=tty0 alone, not the pair: the pair is
	// appended. b.conf's two options lines become one.
	want := map[string]string{
		"loader/entries/a.conf": "title Debian\nversion 6.12\nlinux /vmlinuz-6.12\ninitrd /initrd.img-6.12\noptions root=UUID=1234 ro console=tty0 quiet console=ttyS0,115200n8 console=tty0\n",
		"loader/entries/b.conf": "title Debian (rescue)\n# a comment\nlinux /vmlinuz-6.11\noptions root=UUID=1234 ro quiet console=ttyS0,115200n8 console=tty0\n",
		"loader/entries/c.conf": "title No options\nlinux /vmlinuz-6.10\noptions quiet console=ttyS0,115200n8 console=tty0\n",
		"loader/entries/readme": "not an entry",
		"grub/grub.cfg":         "# untouched\n",
	}
	for p, c := range want {
		if got := read(t, disk, p); got != c {
			t.Errorf("after Run(), %s = %q, want %q", p, got, c)
		}
	}
	if _, err := os.Stat(flag); err != nil {
		t.Errorf("Run() changed the entries but wrote no reboot flag: %v", err)
	}
	if reboots != 1 {
		t.Errorf("Run() rebooted %d times, want 1", reboots)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("Run() left %v in the temporary directory", left)
	}

	// The boot after the reboot: nothing changes, no flag, no reboot.
	os.Remove(flag)
	m.calls = nil
	changed, err = Run(context.Background(), d)
	if err != nil || changed {
		t.Fatalf("Run() again = %v, %v, want false, nil", changed, err)
	}
	if !slices.Equal(m.calls, wantCalls) {
		t.Errorf("Run() again ran %q, want %q", m.calls, wantCalls)
	}
	if _, err := os.Stat(flag); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Run() again wrote the reboot flag: %v", err)
	}
	if reboots != 1 {
		t.Errorf("Run() again rebooted: %d reboots", reboots)
	}
	for p, c := range want {
		if got := read(t, disk, p); got != c {
			t.Errorf("after Run() again, %s = %q, want %q", p, got, c)
		}
	}
}

func TestRunBootDevice(t *testing.T) {
	tests := []struct {
		name      string
		labels    map[string]string
		link      bool
		device    string
		failBlkid bool
		wantIs    error
		wantIn    string
		wantMount string
	}{
		{name: "named device", labels: map[string]string{"/dev/sdz1": "boot", "/dev/vda2": "other"}, device: "/dev/vda2", wantMount: "/dev/vda2"},
		{name: "udev link", labels: map[string]string{"/dev/vda2": "boot"}, link: true, wantMount: "<link>"},
		{name: "no boot filesystem", labels: map[string]string{"/dev/vda2": "BOOT"}, wantIs: ErrNoBootFilesystem},
		{name: "two boot filesystems", labels: map[string]string{"/dev/vda2": "boot", "/dev/vdb2": "boot"}, wantIs: ErrAmbiguousBootFilesystem, wantIn: "/dev/vda2, /dev/vdb2"},
		{name: "blkid fails", labels: map[string]string{"/dev/vda2": "boot"}, failBlkid: true, wantIn: "looking for the filesystem labelled boot: blkid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeMachine(t)
			for dev, l := range tt.labels {
				m.addDevice(dev, l, bootFiles())
			}
			m.failBlkid = tt.failBlkid
			devDir := t.TempDir()
			link := filepath.Join(devDir, "disk/by-label/boot")
			if tt.link {
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(link, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				m.devices[link] = m.devices["/dev/vda2"]
			}
			_, err := Run(context.Background(), Deps{
				Args:       config.KernelArguments{ShouldExist: []string{"quiet"}},
				Logger:     testLogger(t),
				Runner:     m,
				BootDevice: tt.device,
				DevDir:     devDir,
				TempDir:    t.TempDir(),
			})
			if tt.wantMount != "" {
				if err != nil {
					t.Fatalf("Run() = %v", err)
				}
				want := "mount -o rw " + strings.ReplaceAll(tt.wantMount, "<link>", link) + " <dir>"
				if !slices.Contains(m.calls, want) {
					t.Errorf("Run() ran %q, want %q", m.calls, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Run() = nil, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Run() = %v, want errors.Is %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Run() = %q, want it to contain %q", err, tt.wantIn)
			}
			for _, c := range m.calls {
				if strings.HasPrefix(c, "mount") {
					t.Errorf("Run() mounted something: %q", c)
				}
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		setup     func(m *fakeMachine)
		args      *config.KernelArguments
		reboot    error
		wantIs    error
		wantIn    string
		wantCalls []string
		wantFiles map[string]string
		changed   bool
	}{
		{
			name:      "no entries",
			files:     map[string]string{"grub/grub.cfg": "x"},
			wantIs:    ErrNoEntries,
			wantIn:    "boot filesystem /dev/vda2: no boot loader entries in loader/entries/*.conf",
			wantCalls: []string{"mount -o rw /dev/vda2 <dir>", "umount <dir>"},
		},
		{
			name:      "arguments that undo each other",
			files:     bootFiles(),
			args:      &config.KernelArguments{ShouldExist: []string{"console=ttyS0 console=tty0"}, ShouldNotExist: []string{"console=tty0"}},
			wantIs:    ErrConflict,
			wantIn:    "entry loader/entries/a.conf: shouldExist and shouldNotExist undo each other",
			wantCalls: []string{"mount -o rw /dev/vda2 <dir>", "umount <dir>"},
		},
		{
			// b.conf conflicts, a.conf (planned first) does not: neither
			// is written.
			name:      "conflict in a later entry",
			files:     map[string]string{"loader/entries/a.conf": "options x\n", "loader/entries/b.conf": "options a c\n"},
			args:      &config.KernelArguments{ShouldExist: []string{"a"}, ShouldNotExist: []string{"a c"}},
			wantIs:    ErrConflict,
			wantIn:    "entry loader/entries/b.conf",
			wantCalls: []string{"mount -o rw /dev/vda2 <dir>", "umount <dir>"},
			wantFiles: map[string]string{"loader/entries/a.conf": "options x\n", "loader/entries/b.conf": "options a c\n"},
		},
		{
			name:      "mount fails",
			files:     bootFiles(),
			setup:     func(m *fakeMachine) { m.failMount = true },
			wantIn:    "boot filesystem /dev/vda2: mount -o rw /dev/vda2",
			wantCalls: []string{"mount -o rw /dev/vda2 <dir>"},
		},
		{
			name:      "umount fails",
			files:     bootFiles(),
			setup:     func(m *fakeMachine) { m.failUmount = true },
			wantIn:    "umount: target is busy",
			wantCalls: []string{"mount -o rw /dev/vda2 <dir>", "umount <dir>"},
			changed:   true, // the entries were written before
		},
		{
			name:      "reboot fails",
			files:     bootFiles(),
			reboot:    errors.New("no systemd"),
			wantIn:    "rebooting after changing the kernel arguments: no systemd",
			wantCalls: []string{"mount -o rw /dev/vda2 <dir>", "umount <dir>"},
			changed:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeMachine(t)
			disk := m.addDevice("/dev/vda2", "boot", tt.files)
			if tt.setup != nil {
				tt.setup(m)
			}
			args := config.KernelArguments{ShouldExist: []string{"quiet"}}
			if tt.args != nil {
				args = *tt.args
			}
			changed, err := Run(context.Background(), Deps{
				Args:       args,
				Logger:     testLogger(t),
				Runner:     m,
				BootDevice: "/dev/vda2",
				TempDir:    t.TempDir(),
				Reboot:     func(context.Context) error { return tt.reboot },
			})
			if err == nil {
				t.Fatalf("Run() = nil, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Run() = %v, want errors.Is %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Run() = %q, want it to contain %q", err, tt.wantIn)
			}
			if changed != tt.changed {
				t.Errorf("Run() changed = %v, want %v", changed, tt.changed)
			}
			if !slices.Equal(m.calls, tt.wantCalls) {
				t.Errorf("Run() ran %q, want %q", m.calls, tt.wantCalls)
			}
			for p, c := range tt.wantFiles {
				if got := read(t, disk, p); got != c {
					t.Errorf("after Run(), %s = %q, want %q", p, got, c)
				}
			}
		})
	}
}

func TestRunHelper(t *testing.T) {
	args := config.KernelArguments{
		ShouldExist:    []string{"quiet", "console=ttyS0 console=tty0"},
		ShouldNotExist: []string{"splash"},
	}
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fails=%v", fail), func(t *testing.T) {
			m := newFakeMachine(t)
			m.addDevice("/dev/vda2", "boot", bootFiles())
			m.helper = "/usr/sbin/flint-kargs-helper"
			m.failHelper = fail
			changed, err := Run(context.Background(), Deps{Args: args, Logger: testLogger(t), Runner: m, Helper: m.helper})
			want := []string{"/usr/sbin/flint-kargs-helper --should-exist quiet --should-exist console=ttyS0 console=tty0 --should-not-exist splash"}
			if !slices.Equal(m.calls, want) {
				t.Errorf("Run() ran %q, want %q", m.calls, want)
			}
			if changed {
				t.Errorf("Run() with a helper changed = true, want false")
			}
			if fail != (err != nil) {
				t.Errorf("Run() = %v, want failure %v", err, fail)
			}
			if fail && !strings.Contains(err.Error(), "kernel arguments helper: /usr/sbin/flint-kargs-helper") {
				t.Errorf("Run() = %q, want it to name the helper", err)
			}
		})
	}
	if got, want := HelperArgs(args), []string{"--should-exist", "quiet", "--should-exist", "console=ttyS0 console=tty0", "--should-not-exist", "splash"}; !slices.Equal(got, want) {
		t.Errorf("HelperArgs() = %q, want %q", got, want)
	}
}

func TestRunNoArguments(t *testing.T) {
	m := newFakeMachine(t)
	changed, err := Run(context.Background(), Deps{Logger: testLogger(t), Runner: m, Helper: "/x"})
	if err != nil || changed || len(m.calls) != 0 {
		t.Errorf("Run(no kargs) = %v, %v and ran %q, want nothing done", changed, err, m.calls)
	}
}

// In the initramfs the stage waits for the shutdown to stop it after
// asking for the reboot, so that the disks stage never starts.
func TestRunRebootWait(t *testing.T) {
	for _, stopped := range []bool{true, false} {
		t.Run(fmt.Sprintf("stopped=%v", stopped), func(t *testing.T) {
			m := newFakeMachine(t)
			m.addDevice("/dev/vda2", "boot", bootFiles())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wait := 50 * time.Millisecond
			if stopped {
				wait = time.Hour
			}
			start := time.Now()
			changed, err := Run(ctx, Deps{
				Args:       config.KernelArguments{ShouldExist: []string{"quiet"}},
				Logger:     testLogger(t),
				Runner:     m,
				BootDevice: "/dev/vda2",
				TempDir:    t.TempDir(),
				Reboot: func(context.Context) error {
					if stopped {
						// systemd's SIGTERM, a moment after the job starts.
						time.AfterFunc(20*time.Millisecond, cancel)
					}
					return nil
				},
				RebootWait: wait,
			})
			if !changed {
				t.Errorf("Run() changed = false, want true")
			}
			if stopped && err != nil {
				t.Errorf("Run() stopped by the shutdown = %v, want success", err)
			}
			if !stopped && !errors.Is(err, ErrNoReboot) {
				t.Errorf("Run() with no shutdown = %v, want ErrNoReboot", err)
			}
			if d := time.Since(start); d < 20*time.Millisecond {
				t.Errorf("Run() returned after %v, before the shutdown or the wait", d)
			}
		})
	}
}

// TestBootDeviceWait: the stage can start before the boot disk shows; it
// waits for the filesystem labelled boot up to DeviceTimeout, then fails
// saying how long it waited.
func TestBootDeviceWait(t *testing.T) {
	run := func(m *fakeMachine, timeout time.Duration) (*bytes.Buffer, error) {
		var log bytes.Buffer
		_, err := Run(context.Background(), Deps{
			Args:          config.KernelArguments{ShouldExist: []string{"quiet"}},
			Logger:        slog.New(oplog.NewTextHandler(&log, nil)),
			Runner:        m,
			DevDir:        t.TempDir(),
			TempDir:       t.TempDir(),
			DeviceTimeout: timeout,
			DevicePoll:    5 * time.Millisecond,
		})
		return &log, err
	}
	m := newFakeMachine(t)
	m.addDevice("/dev/vda2", "boot", bootFiles())
	m.unseen = 2
	log, err := run(m, time.Minute)
	if err != nil {
		t.Fatalf("Run() = %v, want the device found once it shows", err)
	}
	if n := strings.Count(strings.Join(m.calls, "\n"), "blkid"); n != 3 {
		t.Errorf("blkid ran %d times, want 3 (twice unseen, then found)", n)
	}
	if !strings.Contains(log.String(), "[finished] waiting for the filesystem labelled boot") || !strings.Contains(log.String(), "device=/dev/vda2") {
		t.Errorf("log lacks the finished wait naming the device:\n%s", log)
	}

	m = newFakeMachine(t)
	m.addDevice("/dev/vda2", "BOOT", bootFiles())
	start := time.Now()
	_, err = run(m, 50*time.Millisecond)
	if !errors.Is(err, ErrNoBootFilesystem) || !strings.Contains(err.Error(), "after waiting") {
		t.Fatalf("Run() = %v, want ErrNoBootFilesystem after waiting", err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("gave up after %v, before the 50ms timeout", waited)
	}
}
