package vm

// The blackbox tier's RAID and LUKS cases in a guest: the development
// host and CI have no md driver and no device-mapper, so the disk cases
// that declare Needs md or dm skip there. This test builds the blackbox
// test binary (static) and flint, puts both in an initramfs of their own
// (mkblackbox.sh: dracut's base module, the tools, the kernel modules,
// an init that runs the cases and prints a result marker), and boots it
// once. The guest runs only the cases that declare Needs
// (FLINT_BLACKBOX_ONLY_NEEDS); those needing tang or a TPM still skip
// there, saying so. The same boot applies the example kickstarts that
// need md or device-mapper (TestKickstartExamples: the server example's
// RAID1 and LUKS), which the host skips for the same reason.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

const (
	// bbTimeout bounds the one boot: the cases take about two minutes
	// on an idle 2-core machine, several times that under load.
	bbTimeout = 20 * time.Minute
	// bbMemory is the guest's memory; the disk images live in its /tmp.
	bbMemory = "2048"
	// bbPass and bbFail start the init's result line.
	bbPass = "FLINTBB-RESULT: PASS"
	bbFail = "FLINTBB-RESULT: FAIL"
	// bbInit is the init's first line (the kernel's own "Run /init"
	// line is below loglevel=4).
	bbInit = "FLINTBB: init started"
	// bbKernel is the init's line saying what the kernel offers.
	bbKernel = "FLINTBB: md yes, device-mapper yes"
)

// bbResult matches the summary lines of go test -v for the disk cases
// and the kickstart examples (test/case/version).
var bbResult = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP): ((?:TestDisks|TestKickstartExamples)/\S+) \(`)

// bbMustPass are the runs the guest must pass, each at least once: the
// kickstart server example (RAID1 and LUKS), the one example the host
// cannot apply.
var bbMustPass = []string{"TestKickstartExamples/server/"}

// bbMaySkip are the needs the guest does not offer: the cases needing
// them may skip there (no clevis or tang in the image, no TPM).
var bbMaySkip = regexp.MustCompile(`tang|tpm2`)

// TestBlackboxInVM runs the disk cases and the kickstart examples that
// need md or device-mapper in one QEMU guest and fails unless they all
// pass there (the tang and TPM ones may skip).
func TestBlackboxInVM(t *testing.T) {
	kernel, kver := requireBlackboxVM(t)
	dir := t.TempDir()
	start := time.Now()
	flint := buildFlint(t, dir)
	bbtest := filepath.Join(dir, "blackbox.test")
	run(t, repoRoot(t), []string{"CGO_ENABLED=0"}, goTool(), "test", "-c", "-tags", "nethttpomithttp2", "-trimpath",
		"-o", bbtest, "./tests/blackbox")
	initrd := filepath.Join(dir, "blackbox-initrd.img")
	examples := filepath.Join(repoRoot(t), "examples", "kickstart")
	run(t, "", nil, "./mkblackbox.sh", flint, bbtest, examples, kver, dir, initrd)
	t.Logf("flint, the blackbox test binary and the initramfs built in %s", time.Since(start).Round(time.Second))

	text, wall := bootBlackbox(t, dir, kernel, initrd)
	t.Logf("boot: %s wall, from power-on to power-off", wall.Round(100*time.Millisecond))

	lines, err := bbVerdict(text)
	for _, l := range lines {
		t.Logf("in the guest: %s", l)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// bbVerdict reads the guest's console: one line per case run (result and
// name), and an error, with the console's relevant part, unless the
// kernel offered md and device-mapper, no case failed, the run printed
// its PASS marker, only the tang and TPM cases skipped, at least one
// case passed, and every bbMustPass run passed at least once.
func bbVerdict(text string) (lines []string, err error) {
	results := map[string]string{}
	var names []string
	for _, m := range bbResult.FindAllStringSubmatch(text, -1) {
		if _, seen := results[m[2]]; !seen {
			names = append(names, m[2])
		}
		results[m[2]] = m[1]
	}
	sort.Strings(names)
	var failed, badSkips, missing []string
	passed := 0
	mustPass := map[string]bool{}
	for _, n := range names {
		lines = append(lines, results[n]+" "+n)
		switch results[n] {
		case "PASS":
			passed++
			for _, p := range bbMustPass {
				if strings.HasPrefix(n, p) {
					mustPass[p] = true
				}
			}
		case "FAIL":
			failed = append(failed, n)
		case "SKIP":
			if !bbMaySkip.MatchString(n) {
				badSkips = append(badSkips, n)
			}
		}
	}
	for _, p := range bbMustPass {
		if !mustPass[p] {
			missing = append(missing, p+"…")
		}
	}
	switch {
	case !strings.Contains(text, bbKernel):
		return lines, fmt.Errorf("the guest's kernel lacks md or device-mapper (no %q line); console:\n%s", bbKernel, tail(text, 60))
	case len(failed) > 0:
		return lines, fmt.Errorf("cases failed in the guest: %s\n%s\nconsole tail:\n%s", strings.Join(failed, ", "),
			caseOutput(text, failed), tail(text, 40))
	case strings.Contains(text, bbFail) || !strings.Contains(text, bbPass):
		return lines, fmt.Errorf("the blackbox run in the guest did not pass (no %q line); console:\n%s", bbPass, tail(text, 120))
	case len(badSkips) > 0:
		return lines, fmt.Errorf("cases skipped in the guest, whose kernel and image should offer what they need: %s; console:\n%s",
			strings.Join(badSkips, ", "), tail(text, 120))
	case passed == 0:
		return lines, fmt.Errorf("no disk case passed in the guest; console:\n%s", tail(text, 120))
	case len(missing) > 0:
		return lines, fmt.Errorf("no run of %s passed in the guest; console:\n%s", strings.Join(missing, ", "), tail(text, 120))
	}
	lines = append(lines, fmt.Sprintf("%d case runs passed, %d skipped (tang, TPM)", passed, len(names)-passed))
	return lines, nil
}

// requireBlackboxVM skips, naming what is missing, when this machine
// cannot build the guest or boot it.
func requireBlackboxVM(t *testing.T) (kernel, kver string) {
	t.Helper()
	return requireVMHost(t, []string{"qemu-system-x86_64", "dracut", "sgdisk", "sfdisk", "partx", "wipefs", "blkid", "losetup",
		"mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkswap", "mdadm", "cryptsetup"}, nil,
		"qemu-system-x86 linux-image-amd64 dracut gdisk fdisk dosfstools xfsprogs btrfs-progs mdadm cryptsetup e2fsprogs")
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		return "go"
	}
	return gobin
}

// bootBlackbox boots the guest once, at most bbTimeout, and returns its
// console (without \r and terminal escapes) and the wall time. QEMU is
// killed on every path. A guest that has not reached /init within
// earlyTimeout (a TCG hang in the kernel's early setup, see suite.boot)
// is killed and booted again, once.
func bootBlackbox(t *testing.T, dir, kernel, initrd string) (string, time.Duration) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		text, wall, early := bootBlackboxOnce(t, dir, kernel, initrd)
		if !early {
			return text, wall
		}
		if attempt == 2 {
			t.Fatalf("the kernel hung twice before starting /init; console:\n%s", tail(text, 40))
		}
		t.Logf("the kernel hung before starting /init (%s); booting again", tail(text, 1))
	}
}

func bootBlackboxOnce(t *testing.T, dir, kernel, initrd string) (text string, wall time.Duration, early bool) {
	t.Helper()
	text, wall, early, err := runQEMU(t, qemuRun{
		args: []string{"-accel", "tcg", "-cpu", "max", "-m", bbMemory, "-smp", "2",
			"-nodefaults", "-nographic", "-serial", "stdio", "-no-reboot",
			"-kernel", kernel, "-initrd", initrd,
			"-append", "console=ttyS0 panic=-1 loglevel=4",
			"-device", "virtio-rng-pci"},
		logPath:    filepath.Join(dir, "blackbox.console.log"),
		initMarker: bbInit,
		timeout:    bbTimeout,
		keepName:   "TestBlackboxInVM.console.log",
	})
	switch {
	case early:
		return text, wall, true
	case wall >= bbTimeout:
		t.Fatalf("no power-off within %s; console:\n%s", bbTimeout, tail(text, 80))
	case err != nil:
		t.Fatalf("qemu: %v; console:\n%s", err, tail(text, 80))
	}
	return text, wall, false
}

// caseOutput returns what go test printed for each named case, from its
// === RUN line to the next one (at most 60 lines each).
func caseOutput(text string, names []string) string {
	var b strings.Builder
	for _, n := range names {
		_, after, ok := strings.Cut(text, "=== RUN   "+n+"\n")
		if !ok {
			continue
		}
		body, _, _ := strings.Cut(after, "\n=== ")
		lines := strings.Split(body, "\n")
		if len(lines) > 60 {
			lines = append(lines[:60], "…")
		}
		b.WriteString("--- " + n + ":\n" + strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// TestBlackboxVerdict checks, without a VM, that bbVerdict passes only a
// console where the cases passed and fails every other one.
func TestBlackboxVerdict(t *testing.T) {
	const (
		raid   = "    --- PASS: TestDisks/raid.create.raid1/3.0.0 (6.77s)\n"
		tang   = "    --- SKIP: TestDisks/luks.clevis.tang/3.2.0 (0.17s)\n"
		tpm2   = "    --- SKIP: TestDisks/luks.formattedDevice.wipeVolume.tpm2/3.2.0 (0.14s)\n"
		server = "=== RUN   TestKickstartExamples\n=== RUN   TestKickstartExamples/server/3.2.0\n" +
			"--- PASS: TestKickstartExamples (80s)\n    --- PASS: TestKickstartExamples/server/3.2.0 (40.1s)\n"
	)
	head := bbKernel + "\n=== RUN   TestDisks\n=== RUN   TestDisks/raid.create.raid1/3.0.0\n"
	for _, c := range []struct {
		name, text, wantErr string
	}{
		{"pass", head + "--- PASS: TestDisks (9s)\n" + raid + tang + tpm2 + server + "PASS\n" + bbPass + "\n", ""},
		{"case failed", head + "    disks_harness_test.go:949: flint run -stage disks: exit 1, want 0\n" +
			"--- FAIL: TestDisks (9s)\n    --- FAIL: TestDisks/raid.create.raid1/3.0.0 (6.77s)\n" + server + "FAIL\n" + bbFail + " (exit status 1)\n",
			"cases failed in the guest: TestDisks/raid.create.raid1/3.0.0\n--- TestDisks/raid.create.raid1/3.0.0:\n    disks_harness_test.go:949"},
		{"kickstart failed", head + raid + "=== RUN   TestKickstartExamples/server/3.2.0\n    kickstart_test.go:180: flint run -stage files: exit 1\n" +
			"    --- FAIL: TestKickstartExamples/server/3.2.0 (30s)\nFAIL\n" + bbFail + " (exit status 1)\n",
			"cases failed in the guest: TestKickstartExamples/server/3.2.0\n--- TestKickstartExamples/server/3.2.0:\n    kickstart_test.go:180"},
		{"no marker", head + raid + server, "did not pass"},
		{"fail marker", head + raid + server + bbFail + " (exit status 2)\n", "did not pass"},
		{"no md", strings.Replace(head, bbKernel, "FLINTBB: md no, device-mapper yes", 1) + raid + server + bbPass + "\n", "lacks md"},
		{"unexpected skip", head + raid + "    --- SKIP: TestDisks/raid.create.spares/3.0.0 (0.1s)\n" + server + bbPass + "\n",
			"skipped in the guest, whose kernel and image should offer what they need: TestDisks/raid.create.spares/3.0.0"},
		{"kickstart skipped", head + raid + "    --- SKIP: TestKickstartExamples/server/3.2.0 (2s)\n" + bbPass + "\n",
			"skipped in the guest, whose kernel and image should offer what they need: TestKickstartExamples/server/3.2.0"},
		{"kickstart not run", head + raid + bbPass + "\n", "no run of TestKickstartExamples/server/… passed"},
		{"nothing ran", head + tang + bbPass + "\n", "no disk case passed"},
	} {
		_, err := bbVerdict(c.text)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		}
	}
}
