package unitfile

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

func ptr[T any](v T) *T { return &v }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestApply runs Ignition's unit cases (coreos/ignition
// tests/positive/files/units.go and tests/positive/systemd) against a fake
// root and a fake systemctl.
func TestApply(t *testing.T) {
	tests := []struct {
		name string
		// before: files and links in the root; enabled: what the
		// fake systemctl says is enabled.
		files   map[string]string
		links   map[string]string
		enabled []string
		units   []config.Unit

		wantFiles   map[string]string // every file in the root afterwards
		wantLinks   map[string]string
		wantWritten []string
		wantCalls   []string
	}{
		{
			name:        "systemd.unit.create",
			units:       []config.Unit{{Name: "example.service", Contents: ptr("[Service]\nType=oneshot\n"), Enabled: ptr(true)}},
			wantFiles:   map[string]string{"/etc/systemd/system/example.service": "[Service]\nType=oneshot\n", PresetFile: "enable example.service\n"},
			wantWritten: []string{"/etc/systemd/system/example.service", PresetFile},
		},
		{
			name:        "systemd.unit.modify",
			files:       map[string]string{"/etc/systemd/system/example.service": "old"},
			units:       []config.Unit{{Name: "example.service", Contents: ptr("new")}},
			wantFiles:   map[string]string{"/etc/systemd/system/example.service": "new"},
			wantWritten: []string{"/etc/systemd/system/example.service"},
		},
		{
			name:        "systemd.unit.mask",
			units:       []config.Unit{{Name: "example.service", Contents: ptr("x"), Mask: ptr(true)}},
			wantFiles:   map[string]string{},
			wantLinks:   map[string]string{"/etc/systemd/system/example.service": "/dev/null"},
			wantWritten: []string{"/etc/systemd/system/example.service", "/etc/systemd/system/example.service"},
		},
		{
			name:        "unit.mask",
			files:       map[string]string{"/etc/systemd/system/foo.service": "x"},
			units:       []config.Unit{{Name: "foo.service", Mask: ptr(true)}},
			wantFiles:   map[string]string{},
			wantLinks:   map[string]string{"/etc/systemd/system/foo.service": "/dev/null"},
			wantWritten: []string{"/etc/systemd/system/foo.service"},
		},
		{
			name:        "unit.unmask",
			links:       map[string]string{"/etc/systemd/system/foo.service": "/dev/null", "/etc/systemd/system/bar.service": "/usr/lib/systemd/system/baz.service"},
			units:       []config.Unit{{Name: "foo.service", Mask: ptr(false)}, {Name: "bar.service", Mask: ptr(false)}, {Name: "absent.service", Mask: ptr(false)}},
			wantFiles:   map[string]string{},
			wantLinks:   map[string]string{"/etc/systemd/system/bar.service": "/usr/lib/systemd/system/baz.service"},
			wantWritten: []string{"/etc/systemd/system/foo.service"},
		},
		{
			name: "unit.create.emptydropin",
			units: []config.Unit{{Name: "foo.service", Contents: ptr("[Unit]\n"), Dropins: []config.Dropin{
				{Name: "empty.conf", Contents: ptr("")}, {Name: "nil.conf"}, {Name: "a.conf", Contents: ptr("[Service]\n")},
			}}},
			wantFiles: map[string]string{
				"/etc/systemd/system/foo.service":              "[Unit]\n",
				"/etc/systemd/system/foo.service.d/empty.conf": "",
				"/etc/systemd/system/foo.service.d/a.conf":     "[Service]\n",
			},
			wantWritten: []string{"/etc/systemd/system/foo.service", "/etc/systemd/system/foo.service.d/empty.conf", "/etc/systemd/system/foo.service.d", "/etc/systemd/system/foo.service.d/a.conf"},
		},
		{
			name: "instantiated.unit.create",
			units: []config.Unit{
				{Name: "echo@.service", Contents: ptr("[Service]\nExecStart=/bin/echo %i\n")},
				{Name: "echo@bar.service", Enabled: ptr(true)},
				{Name: "echo@foo.service", Enabled: ptr(true)},
			},
			wantFiles: map[string]string{
				"/etc/systemd/system/echo@.service": "[Service]\nExecStart=/bin/echo %i\n",
				PresetFile:                          "enable echo@.service bar foo\n",
			},
			wantWritten: []string{"/etc/systemd/system/echo@.service", PresetFile},
		},
		{
			name: "unit.presets.sorted",
			units: []config.Unit{
				{Name: "z.service", Enabled: ptr(true)},
				{Name: "t@z.service", Enabled: ptr(true)},
				{Name: "a.service", Enabled: ptr(true)},
				{Name: "t@a.service", Enabled: ptr(true)},
				{Name: "t@a.service", Enabled: ptr(true)},
				{Name: "m.timer", Enabled: ptr(true)},
			},
			wantFiles:   map[string]string{PresetFile: "enable a.service\nenable m.timer\nenable t@.service a z\nenable z.service\n"},
			wantWritten: []string{PresetFile},
		},
		{
			name:    "unit.remove.symlinks",
			enabled: []string{"foo.service"},
			units:   []config.Unit{{Name: "foo.service", Enabled: ptr(false)}, {Name: "notenabled.service", Enabled: ptr(false)}},
			wantCalls: []string{
				"systemctl --root /sysroot is-enabled foo.service",
				"systemctl --root /sysroot disable foo.service",
				"systemctl --root /sysroot is-enabled notenabled.service",
			},
			wantFiles:   map[string]string{PresetFile: "disable foo.service\n"},
			wantWritten: []string{PresetFile},
		},
		{
			name:        "preset file appended to",
			files:       map[string]string{PresetFile: "enable image.service\n"},
			units:       []config.Unit{{Name: "b.service", Enabled: ptr(true)}},
			wantFiles:   map[string]string{PresetFile: "enable image.service\nenable b.service\n"},
			wantWritten: []string{PresetFile},
		},
		{
			// A stage run again after a crash: the lines are there.
			name:      "preset lines not appended twice",
			files:     map[string]string{PresetFile: "enable image.service\nenable b.service\n"},
			units:     []config.Unit{{Name: "b.service", Enabled: ptr(true)}},
			wantFiles: map[string]string{PresetFile: "enable image.service\nenable b.service\n"},
		},
		{
			name:        "only the missing preset lines appended",
			files:       map[string]string{PresetFile: "enable a.service\n"},
			units:       []config.Unit{{Name: "a.service", Enabled: ptr(true)}, {Name: "b.service", Enabled: ptr(true)}},
			wantFiles:   map[string]string{PresetFile: "enable a.service\nenable b.service\n"},
			wantWritten: []string{PresetFile},
		},
		{
			name:      "nothing to do",
			units:     []config.Unit{{Name: "foo.service"}},
			wantFiles: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newFakeRoot()
			for p, c := range tt.files {
				root.files[p] = c
			}
			for p, l := range tt.links {
				root.links[p] = l
			}
			sc := &fakeSystemctl{enabled: map[string]bool{}}
			for _, u := range tt.enabled {
				sc.enabled[u] = true
			}
			written, err := Apply(context.Background(), Deps{Root: root, Dir: "/sysroot", Logger: testLogger(t), Runner: sc}, tt.units)
			if err != nil {
				t.Fatalf("Apply() = %v", err)
			}
			if !reflect.DeepEqual(root.files, tt.wantFiles) {
				t.Errorf("Apply() files = %q, want %q", root.files, tt.wantFiles)
			}
			wantLinks := tt.wantLinks
			if wantLinks == nil {
				wantLinks = map[string]string{}
			}
			if !reflect.DeepEqual(root.links, wantLinks) {
				t.Errorf("Apply() links = %q, want %q", root.links, wantLinks)
			}
			if !slices.Equal(written, tt.wantWritten) {
				t.Errorf("Apply() written = %q, want %q", written, tt.wantWritten)
			}
			if !slices.Equal(sc.calls, tt.wantCalls) {
				t.Errorf("Apply() ran %q, want %q", sc.calls, tt.wantCalls)
			}
			for _, p := range written {
				if _, ok := root.files[p]; ok && tt.files[p] == "" && root.modes[p] != 0o644 {
					t.Errorf("Apply() wrote %s with mode %v, want 0644", p, root.modes[p])
				}
			}
		})
	}
}

// The same config gives the same preset file, whatever the map order.
func TestApplyPresetsReproducible(t *testing.T) {
	var units []config.Unit
	for _, n := range []string{"q@1.service", "b.service", "q@3.service", "a.socket", "q@2.service", "c.path"} {
		units = append(units, config.Unit{Name: n, Enabled: ptr(true)})
	}
	var first string
	for i := range 20 {
		root := newFakeRoot()
		if _, err := Apply(context.Background(), Deps{Root: root, Runner: &fakeSystemctl{}}, units); err != nil {
			t.Fatalf("Apply() = %v", err)
		}
		if i == 0 {
			first = root.files[PresetFile]
		} else if root.files[PresetFile] != first {
			t.Fatalf("Apply() preset file = %q, earlier %q", root.files[PresetFile], first)
		}
	}
	if want := "enable a.socket\nenable b.service\nenable c.path\nenable q@.service 1 2 3\n"; first != want {
		t.Errorf("Apply() preset file = %q, want %q", first, want)
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name    string
		units   []config.Unit
		root    func(*fakeRoot)
		runner  Runner
		wantIs  error
		wantIn  string
		written int
	}{
		{
			name:   "unit name with a slash",
			units:  []config.Unit{{Name: "../../etc/passwd", Contents: ptr("x")}},
			wantIs: ErrBadName,
			wantIn: `unit "../../etc/passwd"`,
		},
		{
			name:   "drop-in name with a slash",
			units:  []config.Unit{{Name: "a.service", Dropins: []config.Dropin{{Name: "../x.conf", Contents: ptr("")}}}},
			wantIs: ErrBadName,
			wantIn: `drop-in "../x.conf"`,
		},
		{
			name:   "unit name with a newline injects no preset line",
			units:  []config.Unit{{Name: "a.service", Contents: ptr("a")}, {Name: "evil.service\nenable sshd.service", Enabled: ptr(true)}},
			wantIs: ErrBadName,
			wantIn: `unit "evil.service\nenable sshd.service": not a valid unit or drop-in name: invalid unit name "evil.service\nenable sshd.service": character '\n' is not allowed`,
		},
		{
			name:   "unit name with a space, only masked",
			units:  []config.Unit{{Name: "a b.service", Mask: ptr(true)}},
			wantIs: ErrBadName,
			wantIn: `character ' ' is not allowed`,
		},
		{
			name:   "drop-in name with a control character, without contents",
			units:  []config.Unit{{Name: "a.service", Dropins: []config.Dropin{{Name: "x\x00.conf"}}}},
			wantIs: ErrBadName,
			wantIn: `drop-in "x\x00.conf": not a valid unit or drop-in name: invalid drop-in name "x\x00.conf": control character '\x00'`,
		},
		{
			name:    "write fails",
			units:   []config.Unit{{Name: "a.service", Contents: ptr("a")}, {Name: "b.service", Contents: ptr("b")}},
			root:    func(r *fakeRoot) { r.failWrite = "/etc/systemd/system/b.service" },
			wantIs:  fs.ErrPermission,
			wantIn:  `unit "b.service": writing unit /etc/systemd/system/b.service`,
			written: 1,
		},
		{
			name:   "disable fails",
			units:  []config.Unit{{Name: "a.service", Enabled: ptr(false)}},
			runner: &fakeSystemctl{enabled: map[string]bool{"a.service": true}, failDisable: true},
			wantIn: `unit "a.service": disabling: systemctl --root /sysroot disable a.service: exit status 1: boom`,
			// The preset line is written before the disable.
			written: 1,
		},
		{
			name:   "systemctl missing",
			units:  []config.Unit{{Name: "a.service", Enabled: ptr(false)}},
			runner: missingRunner{},
			wantIn: "asking whether it is enabled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newFakeRoot()
			if tt.root != nil {
				tt.root(root)
			}
			runner := tt.runner
			if runner == nil {
				runner = &fakeSystemctl{}
			}
			written, err := Apply(context.Background(), Deps{Root: root, Dir: "/sysroot", Runner: runner}, tt.units)
			if err == nil {
				t.Fatalf("Apply() = nil, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Apply() = %v, want errors.Is %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Apply() = %q, want it to contain %q", err, tt.wantIn)
			}
			if len(written) != tt.written {
				t.Errorf("Apply() written = %q, want %d paths", written, tt.written)
			}
		})
	}
}

// missingRunner is a machine without systemctl: every command fails to
// start.
type missingRunner struct{}

func (missingRunner) Run(context.Context, string, ...string) ([]byte, error) {
	return nil, fs.ErrNotExist
}

// TestApplyRerunAfterDisable runs the units of a stage killed after
// `systemctl disable` but before the preset file was written (here: a
// later unit fails), then runs them again, as the files stage does after
// a crash. The rerun finds the unit not enabled any more; the preset file
// must still say to disable it, once.
func TestApplyRerunAfterDisable(t *testing.T) {
	units := []config.Unit{
		{Name: "image.service", Enabled: ptr(false)},
		{Name: "later.service", Contents: ptr("[Unit]\n"), Enabled: ptr(true)},
	}
	root := newFakeRoot()
	root.failWrite = "/etc/systemd/system/later.service"
	runner := &fakeSystemctl{enabled: map[string]bool{"image.service": true}}
	d := Deps{Root: root, Dir: "/sysroot", Runner: runner}
	if _, err := Apply(context.Background(), d, units); err == nil {
		t.Fatal("first Apply() = nil, want the write of later.service to fail")
	}
	if runner.enabled["image.service"] {
		t.Fatal("image.service still enabled after the first run: the test no longer reaches the disable")
	}
	root.failWrite = ""
	for run := 2; run <= 3; run++ {
		if _, err := Apply(context.Background(), d, units); err != nil {
			t.Fatalf("Apply() run %d = %v", run, err)
		}
		want := "disable image.service\nenable later.service\n"
		if got := root.files[PresetFile]; got != want {
			t.Errorf("preset file after run %d = %q, want %q", run, got, want)
		}
	}
}

func TestSplitInstance(t *testing.T) {
	tests := []struct {
		in, template, instance string
		ok                     bool
	}{
		{"foo@bar.service", "foo@.service", "bar", true},
		{"foo@bar.baz.service", "foo@.service", "bar.baz", true},
		{"foo@.service", "", "", false},
		{"foo.service", "", "", false},
		{"foo@", "", "", false},
	}
	for _, tt := range tests {
		template, instance, ok := splitInstance(tt.in)
		if template != tt.template || instance != tt.instance || ok != tt.ok {
			t.Errorf("splitInstance(%q) = %q, %q, %v, want %q, %q, %v", tt.in, template, instance, ok, tt.template, tt.instance, tt.ok)
		}
	}
}
