//go:build linux

package blackbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// hardeningCases are configs an adversarial review found to do harm
// (issue 18): each must be refused, or applied without the harm.
func hardeningCases() []filesCase {
	return []filesCase{
		// Ids the kernel cannot hold: 4294967296 would become root's 0.
		{Name: "hardening.id.file.wraps",
			Config:   storage(`{"files":[{"path":"/foo/bar","user":{"id":4294967296},"group":{"id":4294967297},"contents":{"source":"data:,x"}}]}`),
			WantFail: "user id 4294967296 is out of range: it must be between 0 and 4294967294",
			Out:      []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "hardening.id.negative",
			Config:   storage(`{"directories":[{"path":"/d","user":{"id":-5}}]}`),
			WantFail: "user id -5 is out of range",
			Out:      []fnode{{Path: "d", Kind: "absent"}}},
		{Name: "hardening.id.passwd.wraps",
			Config:   passwdCfg(`{"users":[{"name":"core","uid":4294967296}],"groups":[{"name":"g","gid":4294967295}]}`),
			WantFail: "uid 4294967296 is out of range",
			Check: func(t *testing.T, root string) {
				if f := passwdEntry(t, root, "etc/passwd", "core"); f != nil {
					t.Errorf("the user was created: %q", f)
				}
			}},
		{Name: "hardening.id.largest",
			Config: storage(`{"files":[{"path":"/foo/bar","user":{"id":4294967294},"group":{"id":4294967294},"contents":{"source":"data:,x"}}]}`),
			Out:    []fnode{{Path: "foo/bar", Contents: "x", Owner: "4294967294:4294967294"}}},

		// A unit name that would put a second line into the preset file.
		{Name: "hardening.unit.name.newline",
			Config:   systemdCfg(`{"units":[{"name":"evil.service\nenable sshd.service","enabled":true}]}`),
			WantFail: `invalid unit name \"evil.service\\nenable sshd.service\": character '\\n' is not allowed`,
			Out:      []fnode{{Path: presetFile, Kind: "absent"}}},
		{Name: "hardening.unit.name.space",
			Config:   systemdCfg(`{"units":[{"name":"a b.service","contents":"[Unit]\n"}]}`),
			WantFail: `character ' ' is not allowed`,
			Out:      []fnode{{Path: unitDir + "a b.service", Kind: "absent"}}},
		{Name: "hardening.dropin.name.control",
			Config:   systemdCfg(`{"units":[{"name":"a.service","dropins":[{"name":"x\ty.conf","contents":"[Unit]\n"}]}]}`),
			WantFail: `control character '\\t' is not allowed`,
			Out:      []fnode{{Path: unitDir + "a.service.d", Kind: "absent"}}},
		{Name: "hardening.unit.name.escaped",
			Config: systemdCfg(`{"units":[{"name":"dev-disk-by\\x2dlabel-data.mount","enabled":true,"contents":"[Mount]\nWhat=/dev/disk/by-label/data\nWhere=/data\n[Install]\nWantedBy=local-fs.target\n"}]}`),
			Out: []fnode{{Path: unitDir + `dev-disk-by\x2dlabel-data.mount`, Kind: "exists"},
				{Path: presetFile, Contents: "enable dev-disk-by\\x2dlabel-data.mount\n"}}},

		// A mode-only entry on a file the image hard-links elsewhere
		// replaces it with a copy: the other name keeps its mode.
		{Name: "hardening.modeonly.hardlinked", MinVersion: config.V3_6,
			In: []fnode{{Path: "usr/bin/tool", Contents: "#!/bin/sh\n", Mode: 0o755},
				{Path: "etc/tool", Kind: "hard", SameAs: "usr/bin/tool"}},
			Config: storage(`{"files":[{"path":"/etc/tool","mode":2541,"user":{"id":500}}]}`),
			Out: []fnode{{Path: "etc/tool", Contents: "#!/bin/sh\n", Mode: 0o755 | os.ModeSetuid, Owner: "500:0"},
				{Path: "usr/bin/tool", Contents: "#!/bin/sh\n", Mode: 0o755, Owner: "0:0"}},
			Check: func(t *testing.T, root string) {
				a, _ := os.Lstat(filepath.Join(root, "etc/tool"))
				b, _ := os.Lstat(filepath.Join(root, "usr/bin/tool"))
				if os.SameFile(a, b) {
					t.Errorf("etc/tool is still a hard link to usr/bin/tool")
				}
			}},
		// The config's own hard link shares the inode on purpose.
		{Name: "hardening.modeonly.linkedbyconfig",
			In:     []fnode{{Path: "srv/a", Contents: "a"}, {Path: "srv/b", Kind: "hard", SameAs: "srv/a"}},
			Config: storage(`{"files":[{"path":"/srv/a","mode":384}],"links":[{"path":"/srv/b","target":"/srv/a","hard":true}]}`),
			Out:    []fnode{{Path: "srv/a", Contents: "a", Mode: 0o600}, {Path: "srv/b", Kind: "hard", SameAs: "srv/a"}}},
	}
}

func TestFilesHardening(t *testing.T) {
	requireFilesTier(t)
	bin := buildFlint(t)
	srv := filesServers(t)
	for _, c := range hardeningCases() {
		for _, v := range c.versions() {
			t.Run(c.Name+"/"+v.String(), func(t *testing.T) {
				t.Parallel()
				runFilesCase(t, bin, c, v, srv)
			})
		}
	}
}

// TestFilesHardeningMounts: an entry with overwrite true replacing a
// path under which another filesystem is mounted (a tmpfs, or a bind
// mount) fails before deleting anything, instead of emptying the mounted
// filesystem and then failing with EBUSY. It mounts inside the root.
func TestFilesHardeningMounts(t *testing.T) {
	requireFilesTier(t)
	bin := buildFlint(t)
	cases := []struct {
		name string
		bind bool
		// mount is where the filesystem is mounted, inside the root.
		mount, config string
	}{
		{name: "directory over a mounted /var/lib/data", mount: "var/lib/data",
			config: storage(`{"directories":[{"path":"/var","overwrite":true}]}`)},
		{name: "directory over a bind mount", mount: "var/lib/data", bind: true,
			config: storage(`{"directories":[{"path":"/var/lib","overwrite":true}]}`)},
		{name: "directory that is itself a mount point", mount: "var",
			config: storage(`{"directories":[{"path":"/var","overwrite":true}]}`)},
		{name: "file over a directory with a mount", mount: "var/lib/data",
			config: storage(`{"files":[{"path":"/var/lib","overwrite":true,"contents":{"source":"data:,x"}}]}`)},
		{name: "link over a directory with a mount", mount: "var/lib/data", bind: true,
			config: storage(`{"links":[{"path":"/var","target":"/elsewhere","overwrite":true}]}`)},
	}
	vs := (filesCase{}).versions()
	for _, c := range cases {
		for _, v := range []config.Version{vs[0], vs[len(vs)-1]} {
			t.Run(c.name+"/"+v.String(), func(t *testing.T) {
				m := newMachine(t, bin, "")
				root := m.path("sysroot")
				kept := []fnode{{Path: "var/log/messages", Contents: "log"}, {Path: "var/lib/other/f", Contents: "other"},
					{Path: "elsewhere/kept", Contents: "bound"}}
				for _, n := range append(append([]fnode{}, distroRoot...), kept...) {
					makeNode(t, root, n)
				}
				mnt := filepath.Join(root, c.mount)
				if err := os.MkdirAll(mnt, 0o755); err != nil {
					t.Fatal(err)
				}
				if c.bind {
					sh(t, "mount", "--bind", filepath.Join(root, "elsewhere"), mnt)
				} else {
					sh(t, "mount", "-t", "tmpfs", "-o", "size=1m", "flint-bb", mnt)
					makeNode(t, mnt, fnode{Path: "on-tmpfs", Contents: "mounted"})
				}
				t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
				m.write("work/config.ign", strings.ReplaceAll(c.config, "$VERSION", v.String()))
				failed := ""
				for _, st := range filesStages {
					if code, out := m.run(st); code != 0 {
						failed = out
						break
					}
				}
				if want := "another filesystem is mounted there"; !strings.Contains(failed, want) {
					t.Fatalf("the stages did not fail with %q", want)
				}
				if !strings.Contains(failed, "/"+c.mount+": another filesystem") {
					t.Errorf("the failure does not name the mount point /%s", c.mount)
				}
				for _, n := range kept {
					if !strings.HasPrefix(n.Path, c.mount+"/") {
						checkNode(t, root, n)
					}
				}
				if c.bind {
					checkNode(t, mnt, fnode{Path: "kept", Contents: "bound"})
				} else {
					checkNode(t, mnt, fnode{Path: "on-tmpfs", Contents: "mounted"})
				}
				checkNoTemps(t, root)
			})
		}
	}
}

// TestFilesHardeningLogLines: a path with a newline, a NUL and a
// terminal escape in it cannot forge a log line: every line flint prints
// is one of its own, the value escaped (the NUL makes the stage fail, and
// the error is escaped too).
func TestFilesHardeningLogLines(t *testing.T) {
	requireFilesTier(t)
	bin := buildFlint(t)
	const fake = `2001-02-03T04:05:06.000Z INFO     files: files: [finished] writing file /etc/shadow`
	cases := []struct {
		// path is as the config's JSON writes it, shown as the log
		// must show it.
		name, path, shown string
		wantFail          bool
	}{
		{name: "newline", path: `/etc/forged\n` + fake + `\u001b[2J`, shown: `/etc/forged\n` + fake + `\x1b[2J`},
		{name: "nul", path: `/etc/forged\u0000\n` + fake, shown: `/etc/forged\x00\n` + fake, wantFail: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMachine(t, bin, "")
			for _, n := range distroRoot {
				makeNode(t, m.path("sysroot"), n)
			}
			m.write("work/config.ign", strings.ReplaceAll(storage(`{"files":[{"path":"`+c.path+`","contents":{"source":"data:,x"}}]}`),
				"$VERSION", "3.4.0"))
			var out strings.Builder
			failed := false
			for _, st := range filesStages {
				code, o := m.run(st)
				out.WriteString(o)
				if code != 0 {
					failed = true
					break
				}
			}
			if failed != c.wantFail {
				t.Fatalf("the stages failed = %v, want %v", failed, c.wantFail)
			}
			all := out.String()
			if strings.ContainsAny(all, "\x00\x1b") {
				t.Errorf("a NUL or an escape character reached the output")
			}
			for _, l := range strings.Split(all, "\n") {
				if strings.HasPrefix(l, "2001-02-03") {
					t.Errorf("forged line printed: %q", l)
				}
			}
			if !strings.Contains(all, c.shown) {
				t.Errorf("the output does not show the escaped path %q", c.shown)
			}
		})
	}
}
