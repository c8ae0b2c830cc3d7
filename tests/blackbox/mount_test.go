//go:build linux

package blackbox

// The mount and umount cases: partition 1 of the case's disk is the root
// filesystem, mounted by the case on the machine's sysroot (as the
// initramfs mounts /sysroot before the mount stage); `flint run -stage
// mount` must mount the config's filesystems under it, and `-stage umount`
// must leave nothing mounted under it. What is mounted is read from
// /proc/self/mountinfo with findmnt.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
)

// mountCase is one case of the mount and umount stages.
type mountCase struct {
	Name       string
	MinVersion config.Version
	// Disk is the case's disk; partition 1 must be the root filesystem.
	Disk disk
	// Symlinks are made in the root filesystem before the run (path →
	// target), Dirs and Files too.
	Symlinks map[string]string
	Dirs     []string
	Files    []string
	// Config is the config, with $VERSION and $DISK0p<n> placeholders.
	Config string
	// Mounts are what the mount stage must have mounted under the root,
	// shallowest first; nothing else may be mounted there.
	Mounts []wantMount
	// Created are the mountpoint directories the stage must record in
	// the state (notatedDirectories).
	Created []string
	// WantFail is a substring of the mount stage's error; nothing may
	// then be mounted under the root after the umount stage.
	WantFail string
	// Escape, for a symlink case, is a directory outside the root (made
	// by the case under its temp dir; "$ESCAPE" in Symlinks) that must
	// stay empty and unmounted.
	Escape bool
}

// wantMount is one expected mount: the path under the root, the
// partition, its type, and options mountinfo must show.
type wantMount struct {
	Path    string
	Part    int
	FSType  string
	Options []string
}

func mountDisk() disk {
	return disk{SizeMiB: 1024, Partitions: []partition{
		{Number: 1, StartMiB: 1, SizeMiB: 64, Label: "root", FS: &filesystem{Format: "ext4", Label: "root", Files: map[string]string{"etc/os-release": "ID=flint-test\n"}}},
		{Number: 2, StartMiB: 65, SizeMiB: 64, Label: "var", FS: &filesystem{Format: "ext4", Label: "var"}},
		{Number: 3, StartMiB: 129, SizeMiB: 320, Label: "data", FS: &filesystem{Format: "xfs", Label: "data"}},
		{Number: 4, StartMiB: 449, SizeMiB: 160, Label: "log", FS: &filesystem{Format: "btrfs", Label: "log"}},
		{Number: 5, StartMiB: 609, SizeMiB: 16, Label: "swap", FS: &filesystem{Format: "swap", Label: "swap"}},
	}}
}

var mountCases = []mountCase{
	{
		// Listed deepest first: the stage must sort by depth.
		Name: "mount.nested",
		Disk: mountDisk(),
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p3", "format": "xfs", "path": "/var/lib/data"},
			{"device": "$DISK0p4", "format": "btrfs", "path": "/var/log"},
			{"device": "$DISK0p2", "format": "ext4", "path": "/var"}
		]}}`,
		Mounts: []wantMount{
			{Path: "/var", Part: 2, FSType: "ext4"},
			{Path: "/var/log", Part: 4, FSType: "btrfs"},
			{Path: "/var/lib/data", Part: 3, FSType: "xfs"},
		},
		Created: []string{"/var", "/var/log", "/var/lib", "/var/lib/data"},
	},
	{
		Name:  "mount.existingmountpoint",
		Disk:  mountDisk(),
		Dirs:  []string{"/srv/data"},
		Files: []string{"/srv/data/hidden-by-the-mount"},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p3", "format": "xfs", "path": "/srv/data"},
			{"device": "$DISK0p2", "format": "ext4", "path": "/opt/x"}
		]}}`,
		// The same depth: the config's order.
		Mounts: []wantMount{
			{Path: "/srv/data", Part: 3, FSType: "xfs"},
			{Path: "/opt/x", Part: 2, FSType: "ext4"},
		},
		Created: []string{"/opt", "/opt/x"},
	},
	{
		Name: "mount.skips.swap.none.nopath",
		Disk: mountDisk(),
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p5", "format": "swap", "path": "/swap"},
			{"device": "$DISK0p4", "format": "btrfs"},
			{"device": "$DISK0p2", "format": "ext4", "path": "/home"}
		]}}`,
		Mounts:  []wantMount{{Path: "/home", Part: 2, FSType: "ext4"}},
		Created: []string{"/home"},
	},
	{
		Name:       "filesystem.mount.options",
		MinVersion: config.V3_1,
		Disk:       mountDisk(),
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p2", "format": "ext4", "path": "/var", "mountOptions": ["noatime", "nodev", "ro"]},
			{"device": "$DISK0p3", "format": "xfs", "path": "/data", "mountOptions": ["noexec"]}
		]}}`,
		Mounts: []wantMount{
			{Path: "/var", Part: 2, FSType: "ext4", Options: []string{"ro", "noatime", "nodev"}},
			{Path: "/data", Part: 3, FSType: "xfs", Options: []string{"rw", "noexec"}},
		},
		Created: []string{"/var", "/data"},
	},
	{
		Name:       "filesystem.mount.invalidoptions",
		MinVersion: config.V3_1,
		Disk:       mountDisk(),
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p2", "format": "ext4", "path": "/var", "mountOptions": ["flint_not_an_option"]}
		]}}`,
		WantFail: "filesystem $DISK0p2 on /var: mount -t ext4 -o flint_not_an_option",
	},
	{
		Name:     "filesystem.pathusessymlinks",
		Disk:     mountDisk(),
		Symlinks: map[string]string{"/var": "$ESCAPE"},
		Escape:   true,
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p3", "format": "xfs", "path": "/var/lib/data"}
		]}}`,
		WantFail: "filesystem $DISK0p3 on /var/lib/data: /var (to $ESCAPE) is a symlink; mountpoints must be real directories",
	},
	{
		// A relative symlink that stays inside the root is refused too:
		// Ignition's rule is no symlink at all.
		Name:     "mount.relativesymlink",
		Disk:     mountDisk(),
		Dirs:     []string{"/real"},
		Symlinks: map[string]string{"/data": "real"},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p2", "format": "ext4", "path": "/data"}
		]}}`,
		WantFail: "/data (to real) is a symlink",
	},
	{
		Name:  "mount.fileintheway",
		Disk:  mountDisk(),
		Files: []string{"/srv"},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p2", "format": "ext4", "path": "/srv/www"}
		]}}`,
		WantFail: "/srv (----------) is not a directory",
	},
}

// TestMount runs every mount case for its first spec version and the
// newest.
func TestMount(t *testing.T) {
	requireDisks(t)
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		t.Skipf("the mount cases read /proc/self/mountinfo: %v", err)
	}
	bin := buildFlint(t)
	for _, c := range mountCases {
		dc := diskCase{MinVersion: c.MinVersion}
		for _, v := range dc.versions() {
			t.Run(c.Name+"/"+v.String(), func(t *testing.T) { runMountCase(t, bin, c, v) })
		}
	}
	// The second pass, through flint named ignition (stageArgv).
	ign := asIgnition(t, bin)
	for _, c := range mountCases {
		vs := diskCase{MinVersion: c.MinVersion}.versions()
		v := vs[len(vs)-1]
		t.Run("ignition/"+c.Name+"/"+v.String(), func(t *testing.T) { runMountCase(t, ign, c, v) })
	}
}

// mountsUnder lists what mountinfo shows mounted strictly under root:
// target (relative to root), source, type, options; deepest last in
// mount order.
func mountsUnder(t *testing.T, root string) [][4]string {
	t.Helper()
	out := sh(t, "findmnt", "--tab-file", "/proc/self/mountinfo", "-n", "-r", "-o", "TARGET,SOURCE,FSTYPE,OPTIONS")
	var mounts [][4]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		rel, ok := strings.CutPrefix(f[0], root+"/")
		if !ok {
			continue
		}
		mounts = append(mounts, [4]string{"/" + rel, f[1], f[2], f[3]})
	}
	return mounts
}

func runMountCase(t *testing.T, bin string, c mountCase, v config.Version) {
	dir := t.TempDir()
	l := attach(t, dir, 0, c.Disk.SizeMiB, 512)
	buildDisk(t, dir, l, c.Disk)
	escape := filepath.Join(dir, "escape")
	if c.Escape {
		if err := os.Mkdir(escape, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := strings.ReplaceAll(expand(c.Config, v, []loopDisk{l}), "$ESCAPE", escape)
	m := newMachine(t, bin, cfg)
	sysroot := m.path("sysroot")
	if err := os.MkdirAll(sysroot, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, "mount", "-t", "ext4", l.partNode(1), sysroot)
	// Registered after attach's cleanup, so it runs first: whatever a
	// failed case left mounted under the root goes, then the root, then
	// the loop device. Only mounts under this case's own root.
	t.Cleanup(func() {
		if _, errOut, err := shTry("umount", "-R", sysroot); err != nil {
			t.Errorf("umount -R %s: %v: %s", sysroot, err, errOut)
		}
	})
	for _, d := range c.Dirs {
		if err := os.MkdirAll(filepath.Join(sysroot, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range c.Files {
		if err := os.WriteFile(filepath.Join(sysroot, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range c.Symlinks {
		if err := os.Symlink(strings.ReplaceAll(target, "$ESCAPE", escape), filepath.Join(sysroot, p)); err != nil {
			t.Fatal(err)
		}
	}

	if code, out := m.run("fetch-offline"); code != 0 {
		t.Fatalf("flint run -stage fetch-offline: exit %d\n%s", code, out)
	}
	code, out := m.run("mount")
	if strings.Contains(out, "panic") {
		t.Errorf("flint run -stage mount panicked")
	}
	if c.WantFail != "" {
		want := strings.ReplaceAll(expand(c.WantFail, v, []loopDisk{l}), "$ESCAPE", escape)
		if code == 0 || !strings.Contains(out, want) {
			t.Errorf("flint run -stage mount: exit %d, want a failure containing %q", code, want)
		}
	} else if code != 0 {
		t.Fatalf("flint run -stage mount: exit %d, want 0", code)
	}

	got := mountsUnder(t, sysroot)
	if c.WantFail == "" {
		checkMounts(t, l, got, c.Mounts)
		checkCreated(t, m, c.Created)
		// Write through each mount, to find the file on its device later.
		for _, w := range c.Mounts {
			if slices.Contains(w.Options, "ro") {
				continue
			}
			if err := os.WriteFile(filepath.Join(sysroot, w.Path, ".flint-test"), []byte(w.Path), 0o644); err != nil {
				t.Errorf("writing through the mount on %s: %v", w.Path, err)
			}
		}
	} else if len(got) != 0 {
		t.Errorf("after the failed mount stage, mounted under the root: %q (the umount stage below must remove them)", got)
	}
	if c.Escape {
		if entries, _ := os.ReadDir(escape); len(entries) != 0 {
			t.Errorf("the mount stage created %v outside the root, through the symlink", entries)
		}
		if mounts, _, _ := shTry("findmnt", "-n", "--mountpoint", filepath.Join(escape, "lib/data")); mounts != "" {
			t.Errorf("mounted outside the root: %s", mounts)
		}
	}

	// The umount stage runs as the mount unit's ExecStop, after a failure
	// too; twice must be as good as once.
	for run := 1; run <= 2; run++ {
		if code, out := m.run("umount"); code != 0 {
			t.Errorf("flint run -stage umount (run %d): exit %d, want 0\n%s", run, code, out)
		}
		if left := mountsUnder(t, sysroot); len(left) != 0 {
			t.Errorf("after the umount stage (run %d), still mounted under the root: %q", run, left)
		}
	}

	// What was written through each mount is on its own filesystem, not
	// in the root's directory.
	for _, w := range c.Mounts {
		if slices.Contains(w.Options, "ro") {
			continue
		}
		if _, err := os.Stat(filepath.Join(sysroot, w.Path, ".flint-test")); err == nil {
			t.Errorf("%s/.flint-test is in the root filesystem: the write did not go to the mount", w.Path)
		}
		mnt := mountDir(t, dir, l.partNode(w.Part), w.FSType, true)
		b, err := os.ReadFile(filepath.Join(mnt, ".flint-test"))
		if err != nil || string(b) != w.Path {
			t.Errorf("%s: .flint-test = %q, %v, want the file written through %s", l.partNode(w.Part), b, err, w.Path)
		}
		unmount(t, mnt)
	}
	for _, f := range c.Files {
		if _, err := os.Stat(filepath.Join(sysroot, f)); err != nil {
			t.Errorf("%s in the root filesystem: %v, want it kept", f, err)
		}
	}
	// The mountpoints made in the root filesystem itself (not inside
	// another mount) are real directories 0755, whatever flint's umask.
	for _, d := range c.Created {
		if slices.ContainsFunc(c.Mounts, func(w wantMount) bool { return strings.HasPrefix(d, w.Path+"/") }) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(sysroot, d))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
			t.Errorf("mountpoint %s in the root filesystem: %v (%v), want a directory 0755", d, fi.Mode(), err)
		}
	}
}

func checkMounts(t *testing.T, l loopDisk, got [][4]string, want []wantMount) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("mounted under the root: %q, want %d mounts", got, len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		if g[0] != w.Path || g[1] != l.partNode(w.Part) || g[2] != w.FSType {
			t.Errorf("mount %d under the root = %s from %s (%s), want %s from %s (%s)", i, g[0], g[1], g[2], w.Path, l.partNode(w.Part), w.FSType)
		}
		opts := strings.Split(g[3], ",")
		for _, o := range w.Options {
			if !slices.Contains(opts, o) {
				t.Errorf("mount on %s has options %s, want %s among them", w.Path, g[3], o)
			}
		}
	}
}

// checkCreated compares the state's notatedDirectories with want.
func checkCreated(t *testing.T, m *machine, want []string) {
	t.Helper()
	raw, err := os.ReadFile(m.path("run/ignition/state"))
	if err != nil {
		t.Fatalf("reading the state file: %v", err)
	}
	var st struct {
		NotatedDirectories []string `json:"notatedDirectories"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state file: %v", err)
	}
	if !slices.Equal(st.NotatedDirectories, want) {
		t.Errorf("state notatedDirectories = %q, want %q", st.NotatedDirectories, want)
	}
}

// TestUmountBusy holds a file open on a mounted filesystem while the
// umount stage runs: the stage must retry (EBUSY) and succeed once the
// file is closed, and fail, naming the mount, when it never is.
func TestUmountBusy(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	dir := t.TempDir()
	d := mountDisk()
	l := attach(t, dir, 0, d.SizeMiB, 512)
	buildDisk(t, dir, l, d)
	m := newMachine(t, bin, expand(`{"ignition": {"version": "3.0.0"}, "storage": {"filesystems": [
		{"device": "$DISK0p2", "format": "ext4", "path": "/var"}]}}`, config.V3_0, []loopDisk{l}))
	sysroot := m.path("sysroot")
	if err := os.MkdirAll(sysroot, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, "mount", "-t", "ext4", l.partNode(1), sysroot)
	t.Cleanup(func() {
		if _, errOut, err := shTry("umount", "-R", sysroot); err != nil {
			t.Errorf("umount -R %s: %v: %s", sysroot, err, errOut)
		}
	})
	if code, out := m.run("fetch-offline"); code != 0 {
		t.Fatalf("flint run -stage fetch-offline: exit %d\n%s", code, out)
	}
	for _, release := range []bool{true, false} {
		if code, _ := m.run("mount"); code != 0 {
			t.Fatalf("flint run -stage mount: exit %d, want 0", code)
		}
		f, err := os.Create(filepath.Join(sysroot, "var/held-open"))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		if release {
			// Closed after the first tries (200 ms, then 400 ms).
			go func() { defer close(done); time.Sleep(500 * time.Millisecond); f.Close() }()
		}
		code, out := m.run("umount")
		if release {
			<-done
			if code != 0 || !strings.Contains(out, "mount busy: retrying") {
				t.Errorf("flint run -stage umount with a file open for 500ms: exit %d, want 0 after retrying", code)
			}
		} else {
			if code == 0 || !strings.Contains(out, "/var: unmount "+filepath.Join(sysroot, "var")+": device or resource busy") {
				t.Errorf("flint run -stage umount with a file kept open: exit %d, want a failure naming the busy mount", code)
			}
			f.Close()
			if code, _ := m.run("umount"); code != 0 {
				t.Errorf("flint run -stage umount after the file was closed: exit %d, want 0", code)
			}
		}
		if left := mountsUnder(t, sysroot); len(left) != 0 {
			t.Errorf("still mounted under the root: %q", left)
		}
	}
}
