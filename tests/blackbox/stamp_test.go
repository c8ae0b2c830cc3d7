//go:build linux

package blackbox

// The first-boot stamp: a first boot that died between the disks and the
// files stages leaves it on storage that outlives the boot; the next boot
// (a new /run) stops at its first stage, naming the stage that did not
// finish, unless flint.firstboot.retry=1 is on the kernel command line.

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runStamped runs one stage with the stamp at stamp/flint.firstboot (with
// more arguments, after the others), and returns its exit status and
// output.
func (m *machine) runStamped(stage string, more ...string) (int, string) {
	m.t.Helper()
	args := append([]string{"run", "-root", m.path("sysroot"), "-platform", "file", "-stage", stage,
		"-config-cache", m.path("run/ignition.json"), "-state-file", m.path("run/ignition/state"),
		"-neednet", m.path("run/ignition/neednet"), "-firstboot-stamp", m.path("stamp/flint.firstboot"),
		"-log-to-stdout"}, more...)
	cmd := exec.Command(m.bin, args...)
	cmd.Dir = m.path("work")
	cmd.Env = m.env
	out, err := cmd.CombinedOutput()
	m.t.Logf("flint run -stage %s:\n%s", stage, out)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	m.t.Fatalf("running flint: %v", err)
	return -1, ""
}

func TestFirstbootStampStopsTheRerun(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	m := newMachine(t, bin, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/provisioned","contents":{"source":"data:,yes"}}]}}`)
	if err := os.MkdirAll(m.path("sysroot"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The first boot: killed after the disks stage, before files.
	for _, s := range []string{"fetch-offline", "disks"} {
		if code, out := m.runStamped(s); code != 0 {
			t.Fatalf("first boot, %s: exit %d\n%s", s, code, out)
		}
	}
	raw, err := os.ReadFile(m.path("stamp/flint.firstboot"))
	if err != nil {
		t.Fatalf("no stamp after the disks stage: %v", err)
	}
	var st struct{ Stage string }
	if json.Unmarshal(raw, &st); st.Stage != "disks" {
		t.Errorf("stamp %s: stage %q, want disks", raw, st.Stage)
	}

	// The next boot: a new /run, the same stamp.
	newBoot := func() {
		if err := os.RemoveAll(m.path("run")); err != nil {
			t.Fatal(err)
		}
	}
	newBoot()
	code, out := m.runStamped("fetch-offline")
	if code != 1 || !strings.Contains(out, "the previous first boot did not finish: it stopped in stage disks") ||
		!strings.Contains(out, "flint.firstboot.retry=1") {
		t.Errorf("rerun: exit %d, want 1 naming the disks stage and the retry argument\n%s", code, out)
	}
	if m.exists("run/ignition.json") {
		t.Error("the refused stage cached the config")
	}

	// With the retry argument: the whole boot, and no stamp after it.
	newBoot()
	m.write("proc/cmdline", "root=LABEL=root ignition.firstboot ignition.platform.id=file flint.firstboot.retry=1\n")
	for _, s := range []string{"fetch-offline", "disks", "mount", "files", "umount"} {
		if code, out := m.runStamped(s); code != 0 {
			t.Fatalf("retried boot, %s: exit %d\n%s", s, code, out)
		}
	}
	if b, err := os.ReadFile(m.path("sysroot/etc/provisioned")); err != nil || string(b) != "yes" {
		t.Errorf("/etc/provisioned after the retried boot: %q, %v", b, err)
	}
	if m.exists("stamp/flint.firstboot") {
		t.Error("the stamp is still there after the retried boot finished")
	}
	state, err := os.ReadFile(m.path("run/ignition/state"))
	if err != nil || !strings.Contains(string(state), `"interruptedStage":"disks"`) {
		t.Errorf("state after the retried boot: %s (%v), want the interrupted stage disks", state, err)
	}
	if res, err := os.ReadFile(m.path("sysroot/etc/.ignition-result.json")); err != nil || !strings.Contains(string(res), `"interruptedStage":"disks"`) {
		t.Errorf("result file after the retried boot: %s (%v), want the interrupted stage disks", res, err)
	}

	// The machine runs; someone changes the file the boot wrote: flint
	// plan -root reports the drift from the manifest.
	if fi, err := os.Stat(m.path("sysroot/etc/.flint.manifest.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the first boot's manifest: %v (%v), want mode 0600", fi, err)
	}
	cfg := m.path("work/config.ign")
	if d := planDrift(t, bin, m.path("sysroot"), cfg); len(d) != 0 {
		t.Errorf("drift right after the first boot: %+v, want none", d)
	}
	os.Chmod(m.path("sysroot/etc/provisioned"), 0o666)
	d := planDrift(t, bin, m.path("sysroot"), cfg)
	if len(d) != 1 || d[0].Path != "/etc/provisioned" || d[0].Change != "mode" || d[0].Was != "0644" || d[0].Now != "0666" {
		t.Errorf("drift after chmod 0666: %+v, want /etc/provisioned mode 0644 to 0666", d)
	}
}

// TestFirstbootStampOnBootFilesystem keeps the stamp on a filesystem
// labelled boot, as the dracut module does (-firstboot-stamp-device): it
// is mounted only to read or write the stamp, never while a stage runs.
func TestFirstbootStampOnBootFilesystem(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	m := newMachine(t, bin, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/provisioned","contents":{"source":"data:,yes"}}]}}`)
	if err := os.MkdirAll(m.path("sysroot"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := attach(t, t.TempDir(), 0, 16, 512)
	sh(t, "sgdisk", "-n1:2048:0", "-c1:boot", l.dev)
	rescan(t, l, []int{1})
	sh(t, "mkfs.ext4", "-q", "-L", "boot", l.partNode(1))
	dev := []string{"-firstboot-stamp-device", l.partNode(1)}
	mounted := func() bool {
		mounts, _ := os.ReadFile("/proc/self/mountinfo")
		return strings.Contains(string(mounts), m.path("stamp"))
	}
	onBoot := func() (string, bool) {
		mnt := mountDir(t, t.TempDir(), l.partNode(1), "ext4", true)
		defer unmount(t, mnt)
		b, err := os.ReadFile(filepath.Join(mnt, "flint.firstboot"))
		return string(b), err == nil
	}
	for _, s := range []string{"fetch-offline", "disks"} {
		if code, out := m.runStamped(s, dev...); code != 0 {
			t.Fatalf("first boot, %s: exit %d\n%s", s, code, out)
		}
		if mounted() {
			t.Fatalf("after %s the boot filesystem is still mounted at %s", s, m.path("stamp"))
		}
	}
	if b, ok := onBoot(); !ok || !strings.Contains(b, `"stage":"disks"`) {
		t.Fatalf("stamp on the boot filesystem after disks: %q (there: %v), want stage disks", b, ok)
	}
	if err := os.RemoveAll(m.path("run")); err != nil {
		t.Fatal(err)
	}
	if code, out := m.runStamped("fetch-offline", dev...); code != 1 || !strings.Contains(out, "it stopped in stage disks") {
		t.Errorf("rerun: exit %d, want 1 naming the disks stage\n%s", code, out)
	}
	os.RemoveAll(m.path("run"))
	m.write("proc/cmdline", "root=LABEL=root ignition.firstboot ignition.platform.id=file flint.firstboot.retry=1\n")
	for _, s := range []string{"fetch-offline", "disks", "mount", "files", "umount"} {
		if code, out := m.runStamped(s, dev...); code != 0 {
			t.Fatalf("retried boot, %s: exit %d\n%s", s, code, out)
		}
	}
	if b, ok := onBoot(); ok {
		t.Errorf("stamp %q still on the boot filesystem after the retried boot finished", b)
	}
	if mounted() {
		t.Errorf("the boot filesystem is still mounted at %s", m.path("stamp"))
	}
	// Without the device (a cloud image with no filesystem labelled
	// boot): no stamp, and the log says so.
	os.RemoveAll(m.path("run"))
	m.write("proc/cmdline", "root=LABEL=root ignition.firstboot ignition.platform.id=file\n")
	for _, s := range []string{"fetch-offline", "disks"} {
		code, out := m.runStamped(s, "-firstboot-stamp-device", m.path("no-such-device"))
		if code != 0 {
			t.Fatalf("boot without the device, %s: exit %d\n%s", s, code, out)
		}
		if s == "disks" && !strings.Contains(out, "running without the first-boot stamp") {
			t.Errorf("disks stage without the device does not say it runs without the stamp:\n%s", out)
		}
	}
	if m.exists("stamp/flint.firstboot") {
		t.Error("a stamp was written without its filesystem")
	}
}

type driftJSON struct{ Path, Change, Was, Now string }

// planDrift runs flint plan -json -root root and returns its drift.
func planDrift(t *testing.T, bin, root, cfg string) []driftJSON {
	t.Helper()
	// Exit status 1 is a plan with errors: the config applied again
	// would be refused over the drift, which is printed all the same.
	out, err := exec.Command(bin, "plan", "-json", "-root", root, cfg).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("flint plan -root: %v\n%s", err, out)
	}
	var p struct {
		Manifest bool
		Drift    []driftJSON
	}
	if err := json.Unmarshal(out, &p); err != nil || !p.Manifest {
		t.Fatalf("flint plan -json -root: manifest %v, %v\n%s", p.Manifest, err, out)
	}
	return p.Drift
}
