package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKargsEditor(t *testing.T) {
	// The cases of coreos-installer's src/io/bls.rs, test_apply_to.
	tests := []struct {
		in   string
		ed   KargsEditor
		want string
	}{
		{"foo bar foobar", KargsEditor{Delete: []string{"foo"}}, "bar foobar"},
		{"foo bar foobar", KargsEditor{Delete: []string{"bar"}}, "foo foobar"},
		{"foo bar foobar", KargsEditor{Delete: []string{"foobar"}}, "foo bar"},
		{"foo bar foobar", KargsEditor{Delete: []string{"foo bar"}}, "foobar"},
		{"foo bar foobar", KargsEditor{Delete: []string{"bar", "foo"}}, "foobar"},
		{"foo=val bar baz=val", KargsEditor{Delete: []string{"   foo=val"}}, "bar baz=val"},
		{"foo=val bar baz=val", KargsEditor{Delete: []string{"baz=val  "}}, "foo=val bar"},
		{"foo mitigations=auto,nosmt console=tty0 bar console=ttyS0,115200n8 baz",
			KargsEditor{Delete: []string{"mitigations=auto,nosmt", "console=ttyS0,115200n8"}, Append: []string{"console=ttyS1,115200n8  "},
				AppendIfMissing: []string{"bar", "console=ttyS1,115200n8", "boo"}},
			"foo console=tty0 bar baz console=ttyS1,115200n8 boo"},
		{"foo mitigations=auto,nosmt console=tty0 bar console=ttyS0,115200n8 baz",
			KargsEditor{Append: []string{"console=ttyS1,115200n8"}, Replace: []string{"mitigations=auto,nosmt=auto"}, Delete: []string{"console=ttyS0,115200n8"}},
			"foo mitigations=auto console=tty0 bar baz console=ttyS1,115200n8"},
		{"a ignition.platform.id=metal b", KargsEditor{Replace: []string{"ignition.platform.id=metal=qemu"}}, "a ignition.platform.id=qemu b"},
	}
	for _, tt := range tests {
		got, err := tt.ed.Apply(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("%+v.Apply(%q) = %q, %v; want %q", tt.ed, tt.in, got, err, tt.want)
		}
	}
	if _, err := (KargsEditor{Replace: []string{"a=b"}}).Apply("a=b"); err == nil {
		t.Errorf("Replace a=b (not KEY=OLD=NEW) accepted")
	}
}

func TestParseConsole(t *testing.T) {
	// coreos-installer's src/cmdline/console.rs cases.
	tests := []struct{ in, karg, grub string }{
		{"tty0", "console=tty0", ""},
		{"hvc0", "console=hvc0", ""},
		{"ttysclp0", "console=ttysclp0", ""},
		{"ttyS1", "console=ttyS1,9600n8", "serial --unit=1 --speed=9600 --word=8 --parity=no"},
		{"ttyAMA1", "console=ttyAMA1,9600n8", "serial --unit=1 --speed=9600 --word=8 --parity=no"},
		{"ttyS1,1234567e5", "console=ttyS1,1234567e5", "serial --unit=1 --speed=1234567 --word=5 --parity=even"},
		{"ttyS2,5o", "console=ttyS2,5o8", "serial --unit=2 --speed=5 --word=8 --parity=odd"},
		{"ttyS3,17", "console=ttyS3,17n8", "serial --unit=3 --speed=17 --word=8 --parity=no"},
	}
	for _, tt := range tests {
		c, err := ParseConsole(tt.in)
		if err != nil {
			t.Errorf("ParseConsole(%q) = %v", tt.in, err)
			continue
		}
		if c.Karg() != tt.karg {
			t.Errorf("ParseConsole(%q).Karg() = %q, want %q", tt.in, c.Karg(), tt.karg)
		}
		cmds := grubConsoleCommands([]Console{c})
		if tt.grub != "" && cmds[0] != tt.grub {
			t.Errorf("grub command of %q = %q, want %q", tt.in, cmds[0], tt.grub)
		}
	}
	for _, bad := range []string{"console=tty0", "/dev/tty0", "ttyS", "ttyS1,", "ttyS1,9600x8", "ttyS1,9600n9", "ttyS256", "ttyS0,9600n8 ", "tty1"} {
		if _, err := ParseConsole(bad); err == nil {
			t.Errorf("ParseConsole(%q) accepted", bad)
		}
	}
	got := grubConsoleCommands([]Console{{Device: "tty0"}, {Device: "ttyS0", Serial: true, Speed: 115200, Parity: 'n', DataBits: 8}})
	want := []string{"serial --unit=0 --speed=115200 --word=8 --parity=no", "terminal_input console serial", "terminal_output console serial"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("grubConsoleCommands = %q, want %q", got, want)
	}
}

func TestApplyGrubConsole(t *testing.T) {
	// coreos-installer's src/install.rs, test_update_grub_cfg.
	for _, cfg := range []string{
		"a\nb\n# CONSOLE-SETTINGS-START\n# CONSOLE-SETTINGS-END\nc\nd",
		"a\nb\n# CONSOLE-SETTINGS-START\nas df\n# CONSOLE-SETTINGS-END\nc\nd",
		"a\nb\n# CONSOLE-SETTINGS-START\nas df\nghjkl\n# CONSOLE-SETTINGS-END\nc\nd",
	} {
		for _, tt := range []struct {
			cmds []string
			want string
		}{
			{nil, "a\nb\n# CONSOLE-SETTINGS-START\n# CONSOLE-SETTINGS-END\nc\nd"},
			{[]string{"first"}, "a\nb\n# CONSOLE-SETTINGS-START\nfirst\n# CONSOLE-SETTINGS-END\nc\nd"},
			{[]string{"first", "sec ond", "third"}, "a\nb\n# CONSOLE-SETTINGS-START\nfirst\nsec ond\nthird\n# CONSOLE-SETTINGS-END\nc\nd"},
		} {
			got, err := applyGrubConsole(cfg, tt.cmds)
			if err != nil || got != tt.want {
				t.Errorf("applyGrubConsole(%q, %q) = %q, %v; want %q", cfg, tt.cmds, got, err, tt.want)
			}
		}
	}
	if _, err := applyGrubConsole("a\nb\nc\nd", nil); err == nil {
		t.Errorf("a grub.cfg without markers accepted")
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func TestBootEdits(t *testing.T) {
	nm := t.TempDir()
	writeTree(t, nm, map[string]string{"eth0.nmconnection": "[connection]\n"})
	os.Mkdir(filepath.Join(nm, "subdir"), 0o755)
	base := map[string]string{
		"loader/entries/ostree-1-fedora.conf": "title A\noptions  root=x ignition.platform.id=metal console=ttyS0,115200n8 quiet \nlinux /v",
		"loader/entries/ostree-2-fedora.conf": "title B  \nversion 2\noptions root=x ignition.platform.id=metal console=ttyS0,115200n8 quiet\n",
		"loader/entries/zz.txt":               "not an entry\n",
		"coreos/platforms.json":               `{"metal": {"kernel_arguments": ["console=ttyS0,115200n8"], "grub_commands": ["serial --speed=115200", "terminal_input serial console", "terminal_output serial console"]}, "qemu": {"kernel_arguments": ["console=tty0"], "grub_commands": ["terminal_input console", "terminal_output console"]}}`,
		"grub2/console.cfg":                   "x\n# CONSOLE-SETTINGS-START\nserial --speed=115200\n# CONSOLE-SETTINGS-END\n",
		"grub2/grub.cfg":                      "untouched\n",
	}
	tests := []struct {
		name    string
		edits   BootEdits
		want    map[string]string // files that change
		wantErr string
	}{
		{
			name:  "config and stamp only",
			edits: BootEdits{Config: []byte("{}")},
			want:  map[string]string{"ignition/config.ign": "{}", "ignition.firstboot": ""},
		},
		{
			name:  "platform with its console arguments and GRUB commands",
			edits: BootEdits{Platform: "qemu", FirstbootArgs: "ip=dhcp"},
			want: map[string]string{
				"ignition.firstboot":                  "set ignition_network_kcmdline=\"ip=dhcp\"\n",
				"loader/entries/ostree-2-fedora.conf": "title B\nversion 2\noptions root=x ignition.platform.id=qemu quiet console=tty0\n",
				"grub2/console.cfg":                   "x\n# CONSOLE-SETTINGS-START\nterminal_input console\nterminal_output console\n# CONSOLE-SETTINGS-END\n",
			},
		},
		{
			name:  "console overrides the platform's",
			edits: BootEdits{Platform: "qemu", Console: []string{"ttyS1,9600"}, AppendKargs: []string{"a=1"}, DeleteKargs: []string{"quiet"}},
			want: map[string]string{
				"ignition.firstboot":                  "",
				"loader/entries/ostree-2-fedora.conf": "title B\nversion 2\noptions root=x ignition.platform.id=qemu console=ttyS1,9600n8 a=1\n",
				"grub2/console.cfg":                   "x\n# CONSOLE-SETTINGS-START\nserial --unit=1 --speed=9600 --word=8 --parity=no\nterminal_input serial\nterminal_output serial\n# CONSOLE-SETTINGS-END\n",
			},
		},
		{
			name:  "metal changes nothing",
			edits: BootEdits{Platform: "metal", NetworkDir: nm},
			want:  map[string]string{"ignition.firstboot": "", "coreos-firstboot-network/eth0.nmconnection": "[connection]\n"},
		},
		{
			name:  "kargs are deleted after the platform is set",
			edits: BootEdits{Platform: "qemu", DeleteKargs: []string{"ignition.platform.id=metal"}},
			want: map[string]string{
				"ignition.firstboot":                  "",
				"loader/entries/ostree-2-fedora.conf": "title B\nversion 2\noptions root=x ignition.platform.id=qemu quiet console=tty0\n",
				"grub2/console.cfg":                   "x\n# CONSOLE-SETTINGS-START\nterminal_input console\nterminal_output console\n# CONSOLE-SETTINGS-END\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, base)
			err := tt.edits.Apply(dir, func(string, ...any) {})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply = %v", err)
			}
			want := map[string]string{}
			for k, v := range base {
				want[k] = v
			}
			for k, v := range tt.want {
				want[k] = v
			}
			got := readTree(t, dir)
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("%s = %q, want %q", k, got[k], want[k])
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected file %s", k)
				}
			}
			if tt.edits.Config != nil {
				for name, mode := range map[string]os.FileMode{"ignition": os.ModeDir | 0o700, "ignition/config.ign": 0o600} {
					fi, err := os.Stat(filepath.Join(dir, name))
					if err != nil || fi.Mode() != mode {
						t.Errorf("%s: mode %v (%v), want %v", name, fi.Mode(), err, mode)
					}
				}
			}
		})
	}

	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"loader/entries/a.conf": "options root=x\n"})
	if err := (BootEdits{Platform: "qemu"}).Apply(dir, func(string, ...any) {}); err == nil || !strings.Contains(err.Error(), "no ignition.platform.id=metal") {
		t.Errorf("a platform without ignition.platform.id=metal: %v", err)
	}
	writeTree(t, dir, map[string]string{"loader/entries/b.conf": "options a\noptions b\n"})
	if err := (BootEdits{AppendKargs: []string{"x"}}).Apply(dir, func(string, ...any) {}); err == nil || !strings.Contains(err.Error(), "more than one options line") {
		t.Errorf("two options lines: %v", err)
	}
	writeTree(t, dir, map[string]string{"ignition/config.ign": "old"})
	if err := (BootEdits{Config: []byte("{}")}).Apply(dir, func(string, ...any) {}); err == nil {
		t.Errorf("an existing config.ign was overwritten")
	}
}
