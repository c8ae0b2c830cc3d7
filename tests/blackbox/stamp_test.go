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
	"strings"
	"testing"
)

// runStamped runs one stage with the stamp at stamp/flint.firstboot, and
// returns its exit status and output.
func (m *machine) runStamped(stage string) (int, string) {
	m.t.Helper()
	cmd := exec.Command(m.bin, "run", "-root", m.path("sysroot"), "-platform", "file", "-stage", stage,
		"-config-cache", m.path("run/ignition.json"), "-state-file", m.path("run/ignition/state"),
		"-neednet", m.path("run/ignition/neednet"), "-firstboot-stamp", m.path("stamp/flint.firstboot"),
		"-log-to-stdout")
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
