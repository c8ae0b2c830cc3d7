//go:build linux

package blackbox

// The kargs cases: a disk with a filesystem labelled boot holding Boot
// Loader Specification entries and a root filesystem; `flint run -stage
// kargs` edits the entries' options lines, and the case checks them, the
// reboot flag, and that nothing is left mounted. Ignition has no
// blackbox kargs cases (its stage only runs a distro helper), so the names
// are flint's, in Ignition's style.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// kargsCase is one kargs case: the entries before, the config's
// kernelArguments, and the entries after or the failure.
type kargsCase struct {
	Name string
	// Entries are the files under loader/entries on the boot filesystem,
	// by name; Before their contents and After what they must hold after
	// the run (After == nil: unchanged).
	Before map[string]string
	After  map[string]string
	// KernelArguments is the config's kernelArguments JSON ("" for none).
	KernelArguments string
	// Changed says the stage must leave the reboot flag.
	Changed bool
	// Helper, when set, is a shell script run as the distro's helper
	// ($FLINT_KARGS_HELPER); HelperArgv is the argv it must get, one
	// argument a line.
	Helper     string
	HelperArgv string
	// NoBootDevice runs flint without FLINT_KARGS_BOOT_DEVICE (the
	// stage then needs no boot filesystem at all, or finds it by label).
	NoBootDevice bool
	// WantFail is a substring of the error the stage must fail with; the
	// entries must then be unchanged.
	WantFail string
	// Twice runs the stage a second time, which must change nothing.
	Twice bool
}

const (
	blsDebian = "title Debian GNU/Linux\nversion 6.12.6-amd64\nlinux /vmlinuz-6.12.6-amd64\ninitrd /initrd.img-6.12.6-amd64\noptions root=UUID=0f5ea3d2 ro console=tty0 quiet\n"
	blsRescue = "title Debian GNU/Linux (rescue)\nlinux /vmlinuz-6.12.6-amd64\noptions root=UUID=0f5ea3d2 ro single\n"
)

func blsWith(entry, options string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(entry, "\n"), "\n") {
		if strings.HasPrefix(l, "options ") {
			l = "options " + options
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n") + "\n"
}

var kargsCases = []kargsCase{
	{
		Name:            "kargs.shouldexist.append",
		Before:          map[string]string{"debian.conf": blsDebian, "rescue.conf": blsRescue},
		KernelArguments: `{"shouldExist": ["console=ttyS0,115200n8", "mitigations=auto,nosmt"]}`,
		After: map[string]string{
			"debian.conf": blsWith(blsDebian, "root=UUID=0f5ea3d2 ro console=tty0 quiet console=ttyS0,115200n8 mitigations=auto,nosmt"),
			"rescue.conf": blsWith(blsRescue, "root=UUID=0f5ea3d2 ro single console=ttyS0,115200n8 mitigations=auto,nosmt"),
		},
		Changed: true,
		Twice:   true,
	},
	{
		Name:            "kargs.shouldexist.present",
		Before:          map[string]string{"debian.conf": blsDebian},
		KernelArguments: `{"shouldExist": ["quiet", "ro"]}`,
	},
	{
		Name:            "kargs.shouldnotexist.remove",
		Before:          map[string]string{"debian.conf": blsDebian, "rescue.conf": blsRescue},
		KernelArguments: `{"shouldNotExist": ["quiet", "single", "absent=1"]}`,
		After: map[string]string{
			"debian.conf": blsWith(blsDebian, "root=UUID=0f5ea3d2 ro console=tty0"),
			"rescue.conf": blsWith(blsRescue, "root=UUID=0f5ea3d2 ro"),
		},
		Changed: true,
		Twice:   true,
	},
	{
		Name:            "kargs.shouldnotexist.absent",
		Before:          map[string]string{"debian.conf": blsDebian},
		KernelArguments: `{"shouldNotExist": ["splash", "quiet=1"]}`,
	},
	{
		// The pair is on the line, but not in this order: it is
		// appended whole. The other pair is there in order: kept.
		Name:            "kargs.orderedpair",
		Before:          map[string]string{"debian.conf": blsWith(blsDebian, "root=UUID=0f5ea3d2 console=ttyS0 console=tty0 a b")},
		KernelArguments: `{"shouldExist": ["console=tty0 console=ttyS0", "a b"], "shouldNotExist": ["b a"]}`,
		After: map[string]string{
			"debian.conf": blsWith(blsDebian, "root=UUID=0f5ea3d2 console=ttyS0 console=tty0 a b console=tty0 console=ttyS0"),
		},
		Changed: true,
		Twice:   true,
	},
	{
		Name:            "kargs.orderedpair.remove",
		Before:          map[string]string{"debian.conf": blsWith(blsDebian, "rd.luks=1 ip=dhcp rd.neednet=1 ip=dhcp")},
		KernelArguments: `{"shouldNotExist": ["ip=dhcp rd.neednet=1"]}`,
		After:           map[string]string{"debian.conf": blsWith(blsDebian, "rd.luks=1 ip=dhcp")},
		Changed:         true,
		Twice:           true,
	},
	{
		Name:            "kargs.quoted",
		Before:          map[string]string{"debian.conf": blsWith(blsDebian, `root=UUID=0f5ea3d2 dyndbg="file a.c +p"`)},
		KernelArguments: `{"shouldExist": ["dyndbg=\"file a.c +p\"", "opt=\"x y\""], "shouldNotExist": ["+p\""]}`,
		After:           map[string]string{"debian.conf": blsWith(blsDebian, `root=UUID=0f5ea3d2 dyndbg="file a.c +p" opt="x y"`)},
		Changed:         true,
		Twice:           true,
	},
	{
		Name:            "kargs.none",
		Before:          map[string]string{"debian.conf": blsDebian},
		KernelArguments: "",
		NoBootDevice:    true,
	},
	{
		Name:            "kargs.helper",
		Before:          map[string]string{"debian.conf": blsDebian},
		KernelArguments: `{"shouldExist": ["a", "b c"], "shouldNotExist": ["quiet"]}`,
		Helper:          "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$0.argv\"\n",
		HelperArgv:      "--should-exist\na\n--should-exist\nb c\n--should-not-exist\nquiet\n",
	},
	{
		Name:            "kargs.helper.fails",
		Before:          map[string]string{"debian.conf": blsDebian},
		KernelArguments: `{"shouldExist": ["a"]}`,
		Helper:          "#!/bin/sh\necho 'kernel arguments are not supported by this distribution' >&2\nexit 1\n",
		WantFail:        "kernel arguments are not supported by this distribution",
	},
	{
		Name:            "kargs.conflict",
		Before:          map[string]string{"debian.conf": blsDebian},
		KernelArguments: `{"shouldExist": ["console=ttyS0 console=tty1"], "shouldNotExist": ["console=tty1"]}`,
		WantFail:        "shouldExist and shouldNotExist undo each other",
	},
	{
		Name:            "kargs.noentries",
		Before:          map[string]string{},
		KernelArguments: `{"shouldExist": ["quiet"]}`,
		WantFail:        "no boot loader entries in loader/entries/*.conf",
	},
}

// TestKargs runs every kargs case for kernelArguments' first spec version
// (3.3.0) and the newest.
func TestKargs(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	vs := []config.Version{config.V3_3, config.Newest}
	for _, c := range kargsCases {
		for _, v := range vs {
			t.Run(c.Name+"/"+v.String(), func(t *testing.T) { runKargsCase(t, bin, c, v) })
		}
	}
	// The second pass, through flint named ignition (stageArgv).
	ign := asIgnition(t, bin)
	for _, c := range kargsCases {
		t.Run("ignition/"+c.Name+"/"+vs[1].String(), func(t *testing.T) { runKargsCase(t, ign, c, vs[1]) })
	}
}

// bootDisk is a disk with a filesystem labelled boot (partition 1, ext4)
// holding the entries under loader/entries and a root filesystem
// (partition 2).
func bootDisk(t *testing.T, dir string, entries map[string]string) loopDisk {
	files := map[string]string{"grub/grub.cfg": "# not touched by flint\n"}
	for name, body := range entries {
		files["loader/entries/"+name] = body
	}
	d := disk{SizeMiB: 64, Partitions: []partition{
		{Number: 1, StartMiB: 1, SizeMiB: 24, Label: "boot", FS: &filesystem{Format: "ext4", Label: "boot", Files: files}},
		{Number: 2, StartMiB: 25, Label: "root", FS: &filesystem{Format: "ext4", Label: "root"}},
	}}
	if len(entries) == 0 {
		// An empty entries directory, not a missing one.
		files["loader/entries/.keep"] = ""
	}
	l := attach(t, dir, 0, d.SizeMiB, 512)
	buildDisk(t, dir, l, d)
	return l
}

// readEntries mounts the boot filesystem read-only and returns its
// loader/entries files.
func readEntries(t *testing.T, dir string, l loopDisk) map[string]string {
	t.Helper()
	mnt := mountDir(t, dir, l.partNode(1), "ext4", true)
	defer unmount(t, mnt)
	got := map[string]string{}
	names, err := filepath.Glob(filepath.Join(mnt, "loader/entries/*.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(n)] = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "grub/grub.cfg")); err != nil || string(b) != "# not touched by flint\n" {
		t.Errorf("grub/grub.cfg = %q, %v, want it untouched", b, err)
	}
	return got
}

// mountedFrom lists the mountpoints of node in this mount namespace.
func mountedFrom(t *testing.T, node string) []string {
	t.Helper()
	out, _, err := shTry("findmnt", "-n", "-o", "TARGET", "--source", node)
	if err != nil {
		return nil // findmnt exits 1 when nothing matches
	}
	return strings.Fields(out)
}

func runKargsCase(t *testing.T, bin string, c kargsCase, v config.Version) {
	dir := t.TempDir()
	l := bootDisk(t, dir, c.Before)
	cfg := fmt.Sprintf(`{"ignition": {"version": %q}`, v.String())
	if c.KernelArguments != "" {
		cfg += `, "kernelArguments": ` + c.KernelArguments
	}
	cfg += "}"
	m := newMachine(t, bin, cfg)
	tmp := m.path("tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	m.env = append(m.env, "TMPDIR="+tmp)
	if !c.NoBootDevice {
		m.env = append(m.env, "FLINT_KARGS_BOOT_DEVICE="+l.partNode(1))
	}
	helper := ""
	if c.Helper != "" {
		helper = m.path("helper/kargs-helper")
		m.write("helper/kargs-helper", c.Helper)
		if err := os.Chmod(helper, 0o755); err != nil {
			t.Fatal(err)
		}
		m.env = append(m.env, "FLINT_KARGS_HELPER="+helper)
	}
	if code, out := m.run("fetch-offline"); code != 0 {
		t.Fatalf("flint run -stage fetch-offline: exit %d\n%s", code, out)
	}
	flag := m.path("run/ignition/kargs-reboot")

	runs := 1
	if c.Twice {
		runs = 2
	}
	for run := 1; run <= runs; run++ {
		code, out := m.run("kargs")
		if strings.Contains(out, "panic") {
			t.Errorf("flint run -stage kargs panicked:\n%s", out)
		}
		switch {
		case c.WantFail != "" && (code == 0 || !strings.Contains(out, c.WantFail)):
			t.Errorf("flint run -stage kargs: exit %d, want a failure containing %q", code, c.WantFail)
		case c.WantFail == "" && code != 0:
			t.Fatalf("flint run -stage kargs (run %d): exit %d, want 0", run, code)
		}
		if mounts := mountedFrom(t, l.partNode(1)); len(mounts) != 0 {
			t.Errorf("after the kargs stage, %s is still mounted on %q", l.partNode(1), mounts)
			for _, mnt := range mounts {
				shTry("umount", mnt)
			}
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("the kargs stage left %v in its temporary directory", left)
		}
		wantFlag := c.Changed && run == 1
		if _, err := os.Stat(flag); (err == nil) != wantFlag {
			t.Errorf("run %d: reboot flag %s exists = %v, want %v", run, flag, err == nil, wantFlag)
		}
		os.Remove(flag)
	}

	want := c.After
	if want == nil {
		want = c.Before
	}
	got := readEntries(t, dir, l)
	names := slices.Sorted(maps.Keys(want))
	for name := range got {
		if _, ok := want[name]; !ok {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if got[name] != want[name] {
			t.Errorf("loader/entries/%s =\n%q\nwant\n%q", name, got[name], want[name])
		}
	}
	if c.HelperArgv != "" {
		b, err := os.ReadFile(helper + ".argv")
		if err != nil || string(b) != c.HelperArgv {
			t.Errorf("the helper got argv\n%q (%v)\nwant\n%q", b, err, c.HelperArgv)
		}
	}
}

// TestKargsFindsBootByLabel runs the stage without naming the device: it
// must find the one filesystem labelled boot with blkid. It skips when
// another filesystem on this host carries that label (another test's
// disk, the host's own /boot): flint would rightly refuse to choose.
func TestKargsFindsBootByLabel(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	if _, err := os.Stat("/dev/disk/by-label/boot"); err == nil {
		t.Skip("this host has /dev/disk/by-label/boot: flint would use that, not the test's disk")
	}
	dir := t.TempDir()
	l := bootDisk(t, dir, map[string]string{"debian.conf": blsDebian})
	out, _, _ := shTry("blkid", "-c", "/dev/null", "-o", "device", "-t", "LABEL=boot")
	if devs := strings.Fields(out); len(devs) != 1 || devs[0] != l.partNode(1) {
		t.Skipf("filesystems labelled boot on this host: %q, not only the test's %s", devs, l.partNode(1))
	}
	m := newMachine(t, bin, `{"ignition": {"version": "3.3.0"}, "kernelArguments": {"shouldExist": ["flint.test=1"]}}`)
	if code, out := m.run("fetch-offline"); code != 0 {
		t.Fatalf("flint run -stage fetch-offline: exit %d\n%s", code, out)
	}
	if code, out := m.run("kargs"); code != 0 {
		if strings.Contains(out, "more than one filesystem is labelled boot") {
			t.Skipf("another filesystem labelled boot appeared during the test:\n%s", out)
		}
		t.Fatalf("flint run -stage kargs: exit %d, want 0", code)
	}
	got := readEntries(t, dir, l)
	if want := blsWith(blsDebian, "root=UUID=0f5ea3d2 ro console=tty0 quiet flint.test=1"); got["debian.conf"] != want {
		t.Errorf("loader/entries/debian.conf = %q, want %q", got["debian.conf"], want)
	}
}
