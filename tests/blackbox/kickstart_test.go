//go:build linux

package blackbox

// The example kickstarts (examples/kickstart) translated by the real
// binary, validated, and applied to loop devices by the stages the engine
// has. Device names are the one thing the test changes in a translation:
// the examples name real disks (sda, nvme0n1) and partitions by label
// (/dev/disk/by-partlabel/…, which udev makes and this host has no udev),
// so each becomes its loop device or partition node; RAID arrays and LUKS
// volumes get a prefix because /dev/md and /dev/mapper are shared with
// whatever else runs on the host.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/vincent-petithory/dataurl"
)

// kickstartStages are the stages the test knows how to apply and check, in
// boot order. fetch is left out: fetch-offline reads the config from the
// file platform, and the translations fetch nothing.
var kickstartStages = []string{"fetch-offline", "disks", "mount", "files", "umount"}

// engineStages asks the binary which stages it has (flint run -h).
func engineStages(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command(bin, "run", "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("flint run -h: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if _, list, ok := strings.Cut(line, "the stage to run: "); ok {
			return strings.Split(strings.TrimSpace(list), ", ")
		}
	}
	t.Fatalf("flint run -h lists no stages:\n%s", out)
	return nil
}

// TestKickstartExamples translates and applies every example kickstart.
func TestKickstartExamples(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	var apply []string
	have := engineStages(t, bin)
	for _, s := range kickstartStages {
		if slices.Contains(have, s) {
			apply = append(apply, s)
		}
	}
	t.Logf("stages applied: %s (the engine has %s)", strings.Join(apply, ", "), strings.Join(have, ", "))
	// $FLINT_BLACKBOX_EXAMPLES names the examples' directory: the VM tier
	// copies them into its guest, which has no checkout.
	dir := os.Getenv("FLINT_BLACKBOX_EXAMPLES")
	if dir == "" {
		dir = filepath.Join("..", "..", "examples", "kickstart")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	// $FLINT_BLACKBOX_ONLY_NEEDS runs only the examples that need the
	// kernel's md or device-mapper, as TestDisks does with its cases: the
	// VM tier applies those in a guest whose kernel has both.
	onlyNeeds := os.Getenv("FLINT_BLACKBOX_ONLY_NEEDS") != ""
	// Each at the oldest spec it translates to without errors (cloud's
	// %ignition section is 3.4.0, server's LUKS needs 3.2.0) and at the
	// default, the newest stable. needsKernel says whether its
	// translation has RAID arrays or LUKS volumes (checked against the
	// translation in runKickstartExample).
	for _, ex := range []kickstartExample{
		{"cloud", "3.4.0", false}, {"workstation", "3.0.0", false}, {"server", "3.2.0", true},
	} {
		if onlyNeeds && !ex.needsKernel {
			continue
		}
		for _, spec := range []string{ex.oldest, config.NewestStable.String()} {
			t.Run(ex.name+"/"+spec, func(t *testing.T) { runKickstartExample(t, bin, dir, ex, spec, apply) })
		}
	}
}

// kickstartExample is one file of examples/kickstart: its name, the oldest
// spec it translates to, and whether applying it needs the kernel's md or
// device-mapper (RAID arrays or LUKS volumes in its translation).
type kickstartExample struct {
	name, oldest string
	needsKernel  bool
}

func runKickstartExample(t *testing.T, bin, dir string, ex kickstartExample, spec string, stages []string) {
	name := ex.name
	work := t.TempDir()
	ign := filepath.Join(work, name+".ign")
	cmd := exec.Command(bin, "kickstart", "-spec", spec, "-o", ign, name+".ks")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flint kickstart %s.ks: %v\n%s", name, err, out)
	}
	if out, err := exec.Command(bin, "validate", "-strict", ign).CombinedOutput(); err != nil {
		t.Fatalf("flint validate -strict %s: %v\n%s", ign, err, out)
	}
	raw, err := os.ReadFile(ign)
	if err != nil {
		t.Fatal(err)
	}
	cfg, v, _, err := config.ParseDeclared(raw)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != spec {
		t.Fatalf("flint kickstart -spec %s wrote a %s config", spec, v)
	}

	if has := len(cfg.Storage.Raid) > 0 || len(cfg.Storage.Luks) > 0; has != ex.needsKernel {
		t.Fatalf("%s.ks: the translation has RAID arrays or LUKS volumes: %v, but the example declares needsKernel %v",
			name, has, ex.needsKernel)
	}
	if lack := kernelLacks(cfg); lack != "" {
		t.Skipf("%s.ks translates and validates, but cannot be applied here: %s", name, lack)
	}

	// The disks, each large enough for its partitions (sparse images).
	rename := map[string]string{}
	var disks []loopDisk
	for i, d := range cfg.Storage.Disks {
		size := int64(16)
		for _, p := range d.Partitions {
			switch {
			case p.SizeMiB == nil:
			case *p.SizeMiB == 0:
				size += 1024
			default:
				size += int64(*p.SizeMiB)
			}
		}
		l := attach(t, work, i, size, 512)
		disks = append(disks, l)
		rename[d.Device] = l.dev
		for _, p := range d.Partitions {
			if p.Label == nil || p.Number == 0 {
				t.Fatalf("%s: partition %+v has no label or number; the test needs both to find its node", d.Device, p)
			}
			rename["/dev/disk/by-partlabel/"+*p.Label] = l.partNode(p.Number)
		}
	}
	for i := range cfg.Storage.Raid {
		r := &cfg.Storage.Raid[i]
		rename["/dev/md/"+r.Name] = "/dev/md/flintks-" + r.Name
		md := "flintks-" + r.Name
		r.Name = md
		t.Cleanup(func() { shTry("mdadm", "--stop", "/dev/md/"+md) }) // before the loop devices go
	}
	for i := range cfg.Storage.Luks {
		l := &cfg.Storage.Luks[i]
		rename["/dev/mapper/"+l.Name] = "/dev/mapper/flintks-" + l.Name
		mapped := "flintks-" + l.Name
		l.Name = mapped
		t.Cleanup(func() { shTry("cryptsetup", "close", mapped) })
	}
	to := func(s string) string {
		if r, ok := rename[s]; ok {
			return r
		}
		return s
	}
	for i := range cfg.Storage.Disks {
		cfg.Storage.Disks[i].Device = to(cfg.Storage.Disks[i].Device)
	}
	for i := range cfg.Storage.Raid {
		for j, d := range cfg.Storage.Raid[i].Devices {
			cfg.Storage.Raid[i].Devices[j] = to(d)
		}
	}
	for i := range cfg.Storage.Luks {
		cfg.Storage.Luks[i].Device = ptrTo(to(*cfg.Storage.Luks[i].Device))
	}
	for i := range cfg.Storage.Filesystems {
		cfg.Storage.Filesystems[i].Device = to(cfg.Storage.Filesystems[i].Device)
	}
	cfg.Ignition.Version = spec // the model marshals no field the translation did not set
	applied, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}

	m := newMachine(t, bin, string(applied))
	for path, body := range kickstartImageRoot {
		m.write(filepath.Join("sysroot", path), body)
	}
	for _, d := range []string{"home", "root", "srv"} {
		if err := os.MkdirAll(m.path(filepath.Join("sysroot", d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { shTry("umount", "-R", m.path("sysroot")) }) // if a stage stopped between mount and umount
	for _, stage := range stages {
		r := m.runStage(context.Background(), stage, 3*time.Minute)
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.out)
		}
		if r.code != 0 {
			t.Fatalf("flint run -stage %s: exit %d\nconfig:\n%s\n%s", stage, r.code, applied, r.out)
		}
		t.Logf("flint run -stage %s: ok", stage)
	}

	if slices.Contains(stages, "disks") {
		checkKickstartDisks(t, cfg, disks)
	}
	if slices.Contains(stages, "files") {
		checkKickstartFiles(t, m, cfg)
	}
}

// kickstartImageRoot is the target root before the stages run: the user
// databases of an image (the groups the examples' users join), as the
// initramfs finds them under /sysroot.
var kickstartImageRoot = map[string]string{
	"etc/passwd":     "root:x:0:0:root:/root:/bin/bash\n",
	"etc/group":      "root:x:0:\nadm:x:4:\nwheel:x:10:\nusers:x:100:\n",
	"etc/shadow":     "root:*:19000:0:99999:7:::\n",
	"etc/gshadow":    "root:::\nadm:::\nwheel:::\nusers:::\n",
	"etc/login.defs": "UID_MIN 1000\nUID_MAX 60000\nGID_MIN 1000\nGID_MAX 60000\nUSERGROUPS_ENAB yes\nCREATE_HOME yes\nENCRYPT_METHOD SHA512\n",
}

// kernelLacks says which kernel driver a config's RAID arrays or LUKS
// volumes need that this host's kernel does not have ("" when none): a
// container's kernel may have neither md nor device-mapper.
func kernelLacks(cfg config.Config) string {
	if len(cfg.Storage.Raid) > 0 {
		if _, err := os.Stat("/proc/mdstat"); err != nil {
			return "RAID needs the kernel's md driver, and there is no /proc/mdstat"
		}
	}
	if len(cfg.Storage.Luks) > 0 {
		f, err := os.OpenFile("/dev/mapper/control", os.O_RDWR, 0)
		if err != nil {
			return fmt.Sprintf("LUKS needs the kernel's device-mapper: %v", err)
		}
		f.Close()
	}
	return ""
}

func ptrTo[T any](v T) *T { return &v }

// checkKickstartDisks compares the disks and filesystems with the config.
func checkKickstartDisks(t *testing.T, cfg config.Config, disks []loopDisk) {
	t.Helper()
	for i, d := range cfg.Storage.Disks {
		_, parts, _ := readTable(t, disks[i])
		if len(parts) != len(d.Partitions) {
			t.Errorf("%s: %d partitions, want %d", d.Device, len(parts), len(d.Partitions))
		}
		for _, want := range d.Partitions {
			got, ok := parts[want.Number]
			if !ok {
				t.Errorf("%s: no partition %d", d.Device, want.Number)
				continue
			}
			if got.Label != *want.Label {
				t.Errorf("%s partition %d: label %q, want %q", d.Device, want.Number, got.Label, *want.Label)
			}
			if want.TypeGUID != nil && !strings.EqualFold(got.TypeGUID, *want.TypeGUID) {
				t.Errorf("%s partition %d: type %s, want %s", d.Device, want.Number, got.TypeGUID, *want.TypeGUID)
			}
			if s := *want.SizeMiB; s > 0 && got.Size != int64(s)<<20/512 {
				t.Errorf("%s partition %d: %d sectors, want %d MiB", d.Device, want.Number, got.Size, s)
			}
		}
	}
	for _, f := range cfg.Storage.Filesystems {
		got := blkid(t, f.Device)
		if got["TYPE"] != *f.Format {
			t.Errorf("filesystem on %s: blkid TYPE %q, want %q", f.Device, got["TYPE"], *f.Format)
		}
		if f.Label != nil && got["LABEL"] != *f.Label {
			t.Errorf("filesystem on %s: blkid LABEL %q, want %q", f.Device, got["LABEL"], *f.Label)
		}
	}
}

// checkKickstartFiles checks every file the translation writes, under the
// machine's root (the translations put files under /etc only, which is on
// the root, not on a filesystem the config mounts).
func checkKickstartFiles(t *testing.T, m *machine, cfg config.Config) {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		du, err := dataurl.DecodeString(*f.Contents.Source)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		p := m.path(filepath.Join("sysroot", f.Path))
		b, err := os.ReadFile(p)
		switch {
		case err != nil:
			t.Errorf("%s: %v", f.Path, err)
		case string(b) != string(du.Data):
			t.Errorf("%s = %q, want %q", f.Path, b, du.Data)
		}
		if fi, err := os.Stat(p); err == nil && f.Mode != nil && fi.Mode().Perm() != os.FileMode(*f.Mode).Perm() {
			t.Errorf("%s: mode %v, want %v", f.Path, fi.Mode().Perm(), os.FileMode(*f.Mode).Perm())
		}
	}
	for _, l := range cfg.Storage.Links {
		if got, err := os.Readlink(m.path(filepath.Join("sysroot", l.Path))); err != nil || got != *l.Target {
			t.Errorf("link %s -> %q (%v), want %q", l.Path, got, err, *l.Target)
		}
	}
	for _, u := range cfg.Systemd.Units {
		if u.Contents == nil {
			continue
		}
		b, err := os.ReadFile(m.path(filepath.Join("sysroot", "etc/systemd/system", u.Name)))
		if err != nil || string(b) != *u.Contents {
			t.Errorf("unit %s = %q (%v), want %q", u.Name, b, err, *u.Contents)
		}
	}
	passwd, _ := os.ReadFile(m.path("sysroot/etc/passwd"))
	shadow, _ := os.ReadFile(m.path("sysroot/etc/shadow"))
	for _, u := range cfg.Passwd.Users {
		if !strings.Contains("\n"+string(passwd), "\n"+u.Name+":") {
			t.Errorf("user %s is not in /etc/passwd:\n%s", u.Name, passwd)
		}
		if u.PasswordHash != nil && !strings.Contains(string(shadow), u.Name+":"+*u.PasswordHash+":") {
			t.Errorf("user %s: /etc/shadow lacks the translated password hash", u.Name)
		}
		for _, k := range u.SSHAuthorizedKeys {
			home := "home/" + u.Name
			if u.Name == "root" {
				home = "root"
			}
			b, _ := os.ReadFile(m.path(filepath.Join("sysroot", home, ".ssh/authorized_keys.d/ignition")))
			if b2, _ := os.ReadFile(m.path(filepath.Join("sysroot", home, ".ssh/authorized_keys"))); !strings.Contains(string(b)+string(b2), k) {
				t.Errorf("user %s: the SSH key is in neither authorized_keys nor authorized_keys.d/ignition", u.Name)
			}
		}
	}
}
