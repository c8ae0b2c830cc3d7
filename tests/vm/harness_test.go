package vm

// The harness: what a scenario needs to boot flint for real. newSuite
// builds, once per test run, flint, the initramfs (dracut, with the
// repository's module and the test probes in testdata/99flintvm, from a
// scratch copy of /usr/lib/dracut so nothing is written under /usr) and
// the busybox root filesystem; suite.boot runs one QEMU with a hard
// timeout and returns its console. Disk images are read back without
// loop devices: sgdisk for tables, debugfs at a partition's offset for
// ext4, mdadm --examine for RAID members.

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// maxVMs bounds the QEMU processes running at once: the machine has two
	// cores, and two TCG guests at a time is where throughput peaks
	// (measured on such a machine: two boots at once took 18.7 s each, one
	// at a time 12.5 s).
	maxVMs = 2
	// bootTimeout bounds one boot; a boot takes 15–45 s, more under load.
	bootTimeout = 4 * time.Minute
	// rootLabel is the busybox root filesystem's label (root=LABEL=…).
	rootLabel = "flintroot"
	// rootStartSector and rootSizeMiB place the root partition on the
	// first disk; the configs add partitions after it.
	rootStartSector = 2048
	rootSizeMiB     = 32
	// sshKey is the key the scenarios install; a public key, no secret.
	sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFlintVMTestKeyOnlyForTheVMTierXXXXXXXXXXXXX flint-vm-test"
)

// suite is what every scenario shares: built once by newSuite.
type suite struct {
	dir    string
	kernel string
	kver   string
	flint  string
	// installed is the tree `make install DESTDIR=` wrote: the dracut
	// module, the binary, the units and the GRUB snippet every image is
	// built from, as a distro's package installs them.
	installed string
	initrd    string
	rootImg   string
	vms       chan struct{}
	// buildLog is dracut's output, kept for the size figure.
	buildLog string
}

// requireTools skips the test, naming what is missing, when this machine
// cannot boot a VM: .ci/run installs all of it on Debian.
func requireTools(t *testing.T) (kernel, kver string) {
	t.Helper()
	var missing []string
	if bb, err := exec.LookPath("busybox"); err == nil && !isStatic(bb) {
		missing = append(missing, "a static busybox (busybox-static)")
	}
	return requireVMHost(t, []string{"qemu-system-x86_64", "dracut", "lsinitrd", "sgdisk", "mkfs.ext4", "debugfs", "mdadm", "cryptsetup", "busybox", "mtype"},
		missing, "qemu-system-x86 linux-image-amd64 dracut dracut-network busybox-static mtools")
}

// requireVMHost skips the test, naming what is missing, unless this is an
// x86_64 Linux host, the test runs as root (dracut needs it), every one of
// tools is on PATH and a kernel with its modules is installed. missing is
// what the caller already found lacking; packages names what .ci/run
// installs for it.
func requireVMHost(t *testing.T, tools, missing []string, packages string) (kernel, kver string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("vm: skipped: the VM tier boots x86_64 Linux guests; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		t.Skip("vm: skipped: dracut needs root to build the initramfs (run as root, as .ci/run does)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	kernel, kver = findKernel()
	if kernel == "" {
		missing = append(missing, "a kernel in /boot with its modules in /lib/modules (linux-image-amd64)")
	}
	if len(missing) > 0 {
		t.Skipf("vm: skipped: missing %s (.ci/run installs them: %s)", strings.Join(missing, ", "), packages)
	}
	return kernel, kver
}

// isStatic reports whether the ELF file at path has no interpreter: the
// root filesystem holds busybox alone, without a C library.
func isStatic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// findKernel returns the newest /boot/vmlinuz-* whose modules are
// installed (the host's running kernel may be another one, without
// modules: dracut is always given --kver).
func findKernel() (path, kver string) {
	paths, _ := filepath.Glob("/boot/vmlinuz-*")
	sort.Strings(paths)
	for i := len(paths) - 1; i >= 0; i-- {
		v := strings.TrimPrefix(filepath.Base(paths[i]), "vmlinuz-")
		if _, err := os.Stat(filepath.Join("/lib/modules", v, "modules.dep")); err == nil {
			return paths[i], v
		}
	}
	return "", ""
}

// repoRoot is the repository's top directory (tests/vm is two below).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

// run runs a host command and fails the test with its output when it
// fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// runErr runs a host command; its error carries the argv and output.
func runErr(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// newSuite builds flint, the initramfs and the root filesystem under dir.
func newSuite(t *testing.T, dir string) *suite {
	t.Helper()
	kernel, kver := requireTools(t)
	s := &suite{dir: dir, kernel: kernel, kver: kver, vms: make(chan struct{}, maxVMs)}
	s.flint = buildFlint(t, dir)
	s.installed = installTree(t, dir)
	start := time.Now()
	s.initrd, s.buildLog = buildInitrd(t, dir, s.installed, kver)
	t.Logf("initramfs built in %s", time.Since(start).Round(time.Second))
	// The binary that boots is the one make install wrote: the same Go
	// build ID (dracut strips what it installs, so not the same bytes).
	inImage, err := exec.Command("lsinitrd", "-f", "usr/bin/flint", s.initrd).Output()
	if err != nil {
		t.Fatalf("lsinitrd -f usr/bin/flint %s: %v", s.initrd, err)
	}
	imageBin := filepath.Join(dir, "flint-in-initrd")
	if err := os.WriteFile(imageBin, inImage, 0o755); err != nil {
		t.Fatal(err)
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	installedID := run(t, "", nil, gobin, "tool", "buildid", filepath.Join(s.installed, "usr/bin/flint"))
	if imageID := run(t, "", nil, gobin, "tool", "buildid", imageBin); imageID != installedID {
		t.Fatalf("the initramfs's /usr/bin/flint (build ID %s) is not the one make install wrote (%s)",
			strings.TrimSpace(imageID), strings.TrimSpace(installedID))
	}
	s.rootImg = buildRoot(t, dir)
	return s
}

// buildFlint builds the binary the way `make build` does.
func buildFlint(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "flint")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	run(t, repoRoot(t), []string{"CGO_ENABLED=0"}, gobin, "build", "-tags", "nethttpomithttp2", "-trimpath",
		"-ldflags", "-s -w -X main.version=vmtest", "-o", bin, "./cmd/flint")
	return bin
}

// installTree is the tree the images are built from: the Debian packages
// in $FLINT_VM_DEBS unpacked into dir/installed, as dpkg installs them
// (make test builds them in its pkg tier first and names them), or else
// what make install writes there.
func installTree(t *testing.T, dir string) string {
	t.Helper()
	debs := os.Getenv("FLINT_VM_DEBS")
	if debs == "" {
		return makeInstall(t, dir)
	}
	files, err := filepath.Glob(filepath.Join(debs, "*.deb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("FLINT_VM_DEBS=%s holds no .deb (%v): run make deb first", debs, err)
	}
	dest := filepath.Join(dir, "installed")
	for _, f := range files {
		run(t, "", nil, "dpkg-deb", "--extract", f, dest)
	}
	t.Logf("images built from the packages %v", files)
	return dest
}

// makeInstall runs `make install` into dir/installed, as a distro's
// package build does (the binary built as make build builds it), and
// returns that DESTDIR: the images are built from what it installed, not
// from the source tree.
func makeInstall(t *testing.T, dir string) string {
	t.Helper()
	dest := filepath.Join(dir, "installed")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	run(t, repoRoot(t), nil, "make", "--no-print-directory", "install", "GO="+gobin, "VERSION=vmtest",
		"DESTDIR="+dest, "BIN="+filepath.Join(dir, "make-build", "flint"), "GENDIR="+filepath.Join(dir, "make-gen"))
	return dest
}

// buildInitrd builds the initramfs with mkinitrd.sh (the demo uses the
// same script) from the dracut module and the binary make install put in
// installed (FLINT_INSTALLED), adding the test probes of
// testdata/99flintvm.
func buildInitrd(t *testing.T, dir, installed, kver string) (img, log string) {
	t.Helper()
	img = filepath.Join(dir, "initrd.img")
	probes, err := filepath.Abs(filepath.Join("testdata", "99flintvm"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, "", []string{"FLINT_INSTALLED=" + installed}, "./mkinitrd.sh", "-", kver, dir, img, probes, liveModule(t, dir, installed))
	out, err := os.ReadFile(filepath.Join(dir, "dracut.log"))
	if err != nil {
		t.Fatal(err)
	}
	return img, string(out)
}

// liveModule assembles the flintlive dracut module (testdata/99flintlive)
// with the live installer's units and generator as make install put them
// in installed, and returns its directory.
func liveModule(t *testing.T, dir, installed string) string {
	t.Helper()
	mod := filepath.Join(dir, "99flintlive")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	units, err := filepath.Glob(filepath.Join(installed, "usr/lib/systemd/system/flint-installer*"))
	if err != nil || len(units) == 0 {
		t.Fatalf("make install wrote no usr/lib/systemd/system/flint-installer* (%v)", err)
	}
	units = append(units, filepath.Join(installed, "usr/lib/systemd/system-generators/flint-installer-generator"))
	run(t, "", nil, "cp", append(append([]string{"-p", filepath.Join("testdata", "99flintlive", "module-setup.sh")}, units...), mod)...)
	return mod
}

// buildRoot makes the busybox root filesystem image with mkroot.sh.
func buildRoot(t *testing.T, dir string) string {
	t.Helper()
	img := filepath.Join(dir, "rootfs.img")
	run(t, "", nil, "./mkroot.sh", dir, img)
	return img
}

// newDisk makes a sparse disk image of sizeMiB; withRoot puts a GPT on it
// with the root filesystem as partition 1 ("root").
func (s *suite) newDisk(t *testing.T, dir, name string, sizeMiB int, withRoot bool) string {
	t.Helper()
	p := filepath.Join(dir, name)
	run(t, "", nil, "truncate", "-s", strconv.Itoa(sizeMiB)+"M", p)
	if withRoot {
		run(t, "", nil, "sgdisk", "-n", fmt.Sprintf("1:%d:+%dM", rootStartSector, rootSizeMiB), "-t", "1:8300", "-c", "1:root", p)
		run(t, "", nil, "dd", "if="+s.rootImg, "of="+p, "bs=1M", fmt.Sprintf("seek=%d", rootStartSector*512/(1<<20)), "conv=notrunc,sparse", "status=none")
	}
	return p
}

// vm is one boot. Its console is saved in the test's directory, and also
// in $FLINT_VM_LOGDIR when that is set (the test's directory is removed).
type vm struct {
	// Name names the console log in the test's directory.
	Name string
	// Args are the kernel arguments after the console and root ones.
	Args []string
	// FwCfg is a file given as the fw_cfg blob opt/com.coreos/config.
	FwCfg string
	// Disks are raw images, attached as virtio disks vda, vdb, …
	Disks []string
	// Net attaches a NIC on QEMU's user network (10.0.2.2 is the host's
	// 127.0.0.1).
	Net bool
	// FromDisk boots the first disk through its boot loader (SeaBIOS,
	// then whatever the disk holds): no -kernel, -initrd or -append, so
	// Args are unused.
	FromDisk bool
	// Timeout replaces bootTimeout when set.
	Timeout time.Duration
	// CDROM boots this ISO from its El Torito boot record (SeaBIOS, then
	// the ISO's boot loader): no -kernel, so Args are unused.
	CDROM string
	// Kernel and Initrd, when set, replace the suite's kernel and
	// initramfs, and Args are the whole command line (a PXE boot of a
	// live image: no root=).
	Kernel, Initrd string
}

// console is a boot's serial output, without \r and terminal escapes.
type console struct {
	text string
	wall time.Duration
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// boot runs the VM until it powers off, at most bootTimeout, never more
// than maxVMs at once. The QEMU process is killed on every path (timeout,
// test failure, panic) by the context and the cleanup.
//
// A TCG guest sometimes hangs in the kernel's early setup on a loaded
// host (seen once: stuck after "Switched to clocksource hpet", before any
// disk was touched). A boot that has not reached the initramfs's /init
// within earlyTimeout is killed and started again, once, and says so.
func (s *suite) boot(t *testing.T, dir string, v vm) console {
	t.Helper()
	s.vms <- struct{}{}
	defer func() { <-s.vms }()
	c, early := s.bootOnce(t, dir, v)
	if early {
		t.Logf("boot %s: the kernel hung before starting /init (%s of console); booting again", v.Name, tail(c.text, 1))
		c, early = s.bootOnce(t, dir, v)
		if early {
			t.Fatalf("boot %s: the kernel hung twice before starting /init; console:\n%s", v.Name, tail(c.text, 40))
		}
	}
	return c
}

// earlyTimeout bounds the time to the initramfs's /init (10–20 s usually).
const earlyTimeout = 2 * time.Minute

// bootOnce runs QEMU once; early reports a guest that never reached /init
// within earlyTimeout (and was killed).
func (s *suite) bootOnce(t *testing.T, dir string, v vm) (c console, early bool) {
	t.Helper()
	args := []string{"-accel", "tcg", "-cpu", "max", "-m", "1024", "-smp", "2",
		"-nodefaults", "-nographic", "-serial", "stdio", "-no-reboot", "-device", "virtio-rng-pci"}
	switch {
	case v.CDROM != "":
		args = append(args, "-drive", "file="+v.CDROM+",media=cdrom,readonly=on", "-boot", "order=d")
	case v.Initrd != "":
		args = append(args, "-kernel", v.Kernel, "-initrd", v.Initrd, "-append", strings.Join(v.Args, " "))
	case !v.FromDisk:
		args = append(args, "-kernel", s.kernel, "-initrd", s.initrd,
			"-append", strings.Join(append([]string{"console=ttyS0", "panic=-1", "root=LABEL=" + rootLabel,
				"rd.shell=0", "rd.emergency=poweroff"}, v.Args...), " "))
	}
	timeout := bootTimeout
	if v.Timeout > 0 {
		timeout = v.Timeout
	}
	if v.FwCfg != "" {
		args = append(args, "-fw_cfg", "name=opt/com.coreos/config,file="+v.FwCfg)
	}
	for _, d := range v.Disks {
		args = append(args, "-drive", "file="+d+",format=raw,if=virtio")
	}
	if v.Net {
		args = append(args, "-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0")
	}
	logPath := filepath.Join(dir, v.Name+".console.log")
	text, wall, early, err := runQEMU(t, qemuRun{
		args:       args,
		logPath:    logPath,
		initMarker: "Run /init as init process",
		timeout:    timeout,
		keepName:   strings.NewReplacer("/", "_").Replace(t.Name()) + "." + v.Name + ".console.log",
	})
	c = console{text: text, wall: wall}
	switch {
	case early:
		return c, true
	case wall >= timeout:
		t.Fatalf("boot %s: no power-off within %s; console:\n%s", v.Name, timeout, tail(text, 80))
	case err != nil:
		t.Fatalf("boot %s: qemu: %v; console:\n%s", v.Name, err, tail(text, 80))
	}
	t.Logf("boot %s: %s wall (console in %s)", v.Name, wall.Round(100*time.Millisecond), logPath)
	return c, false
}

// qemuRun is one run of QEMU by a test.
type qemuRun struct {
	args []string
	// logPath receives the console (cleaned of \r and terminal escapes
	// once QEMU has stopped).
	logPath string
	// initMarker is the console text that shows the guest reached its
	// /init: without it within earlyTimeout the run is an early hang.
	initMarker string
	// timeout bounds the whole run.
	timeout time.Duration
	// keepName is the console's file name in $FLINT_VM_LOGDIR, when set.
	keepName string
}

// runQEMU runs QEMU once and returns its console, the wall time, whether
// the guest hung before its /init (then it was killed: see suite.boot),
// and QEMU's error. QEMU is killed on every path: by the timeout, the
// early-hang watchdog, or the test's cleanup.
func runQEMU(t *testing.T, r qemuRun) (text string, wall time.Duration, early bool, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", r.args...)
	cmd.WaitDelay = 5 * time.Second
	logFile, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("qemu: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	// The early-hang watchdog: it reads the console file as it grows.
	hung := make(chan bool, 1)
	go func() {
		deadline := time.NewTimer(earlyTimeout)
		defer deadline.Stop()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				hung <- false
				return
			case <-tick.C:
				if raw, _ := os.ReadFile(r.logPath); bytes.Contains(raw, []byte(r.initMarker)) {
					hung <- false
					return
				}
			case <-deadline.C:
				hung <- true
				cancel()
				return
			}
		}
	}()
	err = cmd.Wait()
	wall = time.Since(start)
	cancel()
	early = <-hung
	raw, _ := os.ReadFile(r.logPath)
	text = ansi.ReplaceAllString(strings.ReplaceAll(string(raw), "\r", ""), "")
	_ = os.WriteFile(r.logPath, []byte(text), 0o644)
	if keep := os.Getenv("FLINT_VM_LOGDIR"); keep != "" && r.keepName != "" {
		_ = os.WriteFile(filepath.Join(keep, r.keepName), []byte(text), 0o644)
	}
	return text, wall, early, err
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// has reports whether the console has a line containing sub.
func (c console) has(sub string) bool { return strings.Contains(c.text, sub) }

// mustHave fails the test unless every string is on the console.
func (c console) mustHave(t *testing.T, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !c.has(sub) {
			t.Errorf("console lacks %q; console:\n%s", sub, tail(c.text, 120))
			return
		}
	}
}

// journal returns the lines flintvm-journal.service printed: flint's
// journal with monotonic stamps.
func (c console) journal() []string {
	_, after, ok := strings.Cut(c.text, "FLINTVM-JOURNAL-BEGIN\n")
	if !ok {
		return nil
	}
	body, _, _ := strings.Cut(after, "FLINTVM-JOURNAL-END")
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

var monoStamp = regexp.MustCompile(`^\[\s*([0-9]+\.[0-9]+)\]`)

// stamp returns the monotonic time (seconds since the kernel started) of
// the first journal line containing sub.
func stamp(lines []string, sub string) (float64, bool) {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			if m := monoStamp.FindStringSubmatch(l); m != nil {
				f, err := strconv.ParseFloat(m[1], 64)
				return f, err == nil
			}
		}
	}
	return 0, false
}

// partition is one row of sgdisk -p.
type partition struct {
	number      int
	start, end  int64 // sectors
	name        string
	sizeSectors int64
}

// partitions reads a disk image's GPT.
func partitions(t *testing.T, disk string) map[int]partition {
	t.Helper()
	out := run(t, "", nil, "sgdisk", "-p", disk)
	parts := map[int]partition{}
	row := regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+\S+\s*(.*)$`)
	for _, l := range strings.Split(out, "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		start, _ := strconv.ParseInt(m[2], 10, 64)
		end, _ := strconv.ParseInt(m[3], 10, 64)
		parts[n] = partition{number: n, start: start, end: end, name: strings.TrimSpace(m[4]), sizeSectors: end - start + 1}
	}
	return parts
}

// ext4 reads an ext4 filesystem that starts at byte offset of a disk
// image, with debugfs (no loop device, no mount).
type ext4 struct {
	t    *testing.T
	spec string
}

func openExt4(t *testing.T, disk string, startSector int64) ext4 {
	return ext4{t: t, spec: fmt.Sprintf("%s?offset=%d", disk, startSector*512)}
}

// cat returns a file's content, or an error when debugfs cannot read it.
func (e ext4) cat(path string) (string, error) {
	out, err := exec.Command("debugfs", "-R", "cat "+path, e.spec).Output()
	if err != nil {
		return "", fmt.Errorf("debugfs cat %s: %v", path, err)
	}
	if _, statErr := e.stat(path); statErr != nil {
		return "", statErr
	}
	return string(out), nil
}

// stat returns debugfs's stat output for path; an error when it is absent.
func (e ext4) stat(path string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("debugfs", "-R", "stat "+path, e.spec)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("debugfs stat %s: %v", path, err)
	}
	if strings.Contains(stderr.String(), "File not found") || len(out) == 0 {
		return "", fmt.Errorf("%s: %w", path, os.ErrNotExist)
	}
	return string(out), nil
}

// ls lists a directory's names.
func (e ext4) ls(path string) []string {
	out, err := exec.Command("debugfs", "-R", "ls -p "+path, e.spec).Output()
	if err != nil {
		e.t.Fatalf("debugfs ls %s: %v", path, err)
	}
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		// ls -p: /inode/mode/uid/gid/name/size/
		f := strings.Split(l, "/")
		if len(f) >= 6 && f[5] != "." && f[5] != ".." {
			names = append(names, f[5])
		}
	}
	sort.Strings(names)
	return names
}

// mustCat fails the test when path cannot be read.
func (e ext4) mustCat(path string) string {
	e.t.Helper()
	s, err := e.cat(path)
	if err != nil {
		e.t.Fatalf("%v", err)
	}
	return s
}

// owner returns the uid, gid and mode debugfs reports for path.
func (e ext4) owner(path string) (uid, gid int, mode string) {
	e.t.Helper()
	st, err := e.stat(path)
	if err != nil {
		e.t.Fatalf("%v", err)
	}
	m := regexp.MustCompile(`Mode:\s+(\d+)`).FindStringSubmatch(st)
	u := regexp.MustCompile(`User:\s+(\d+)\s+Group:\s+(\d+)`).FindStringSubmatch(st)
	if m == nil || u == nil {
		e.t.Fatalf("debugfs stat %s: unexpected output:\n%s", path, st)
	}
	uid, _ = strconv.Atoi(u[1])
	gid, _ = strconv.Atoi(u[2])
	return uid, gid, m[1]
}

// memberData returns the bytes of a RAID member partition's data area:
// the partition is copied out of the disk image (no loop device) and
// mdadm --examine reads its superblock for the data offset. It also
// returns mdadm's report.
func memberData(t *testing.T, dir, disk string, p partition, n int64) (report string, data []byte) {
	t.Helper()
	part := filepath.Join(dir, fmt.Sprintf("%s.part%d", filepath.Base(disk), p.number))
	run(t, "", nil, "dd", "if="+disk, "of="+part, "bs=512", fmt.Sprintf("skip=%d", p.start),
		fmt.Sprintf("count=%d", p.sizeSectors), "conv=sparse", "status=none")
	report = run(t, "", nil, "mdadm", "--examine", part)
	m := regexp.MustCompile(`Data Offset : (\d+) sectors`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("mdadm --examine %s: no data offset:\n%s", part, report)
	}
	off, _ := strconv.ParseInt(m[1], 10, 64)
	f, err := os.Open(part)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data = make([]byte, n)
	if _, err := f.ReadAt(data, off*512); err != nil {
		t.Fatal(err)
	}
	return report, data
}

// flintShare describes how much of the initramfs is flint's: its binary,
// its units and scripts, and the tools its module installs (the
// binaries, not their shared libraries), from lsinitrd's listing.
func (s *suite) flintShare(t *testing.T) string {
	t.Helper()
	listing := run(t, "", nil, "lsinitrd", s.initrd)
	tools := map[string]bool{}
	for _, name := range strings.Fields("sgdisk sfdisk partx blkid wipefs mkfs.ext4 mke2fs mkswap useradd usermod userdel " +
		"groupadd groupmod groupdel mkfs.xfs mkfs.btrfs mkfs.fat mkfs.vfat mkdosfs mdadm cryptsetup setfiles clevis") {
		tools[name] = true
	}
	var binary, units, toolBytes, total int64
	for _, l := range strings.Split(listing, "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || !strings.HasPrefix(f[0], "-") {
			continue
		}
		size, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			continue
		}
		path := f[8]
		total += size
		base := filepath.Base(path)
		switch {
		case path == "usr/bin/flint":
			binary += size
		case strings.Contains(base, "flint") && !strings.Contains(path, "flintvm"):
			units += size
		case tools[base] && (strings.Contains(path, "bin/")):
			toolBytes += size
		}
	}
	return fmt.Sprintf("FIGURE flint binary %.1f MiB, its units and scripts %.1f KiB, the tools it installs %.1f MiB "+
		"(of the image's %.1f MiB of files, uncompressed)",
		float64(binary)/(1<<20), float64(units)/1024, float64(toolBytes)/(1<<20), float64(total)/(1<<20))
}

// addExt4Partition adds partition number n (sizeMiB, GPT name name) to a
// disk image and fills it with an ext4 filesystem labelled label, made
// by mkfs.ext4 -d from files (path → content).
func addExt4Partition(t *testing.T, dir, disk string, n, sizeMiB int, name, label string, files map[string]string) partition {
	t.Helper()
	tree := filepath.Join(dir, fmt.Sprintf("part%d-tree", n))
	for p, content := range files {
		full := filepath.Join(tree, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "", nil, "sgdisk", "-n", fmt.Sprintf("%d:0:+%dM", n, sizeMiB), "-t", fmt.Sprintf("%d:8300", n), "-c", fmt.Sprintf("%d:%s", n, name), disk)
	p := partitions(t, disk)[n]
	img := filepath.Join(dir, fmt.Sprintf("part%d.img", n))
	run(t, "", nil, "truncate", "-s", strconv.Itoa(sizeMiB)+"M", img)
	run(t, "", nil, "mkfs.ext4", "-q", "-F", "-L", label, "-d", tree, img)
	run(t, "", nil, "dd", "if="+img, "of="+disk, "bs=512", fmt.Sprintf("seek=%d", p.start), "conv=notrunc,sparse", "status=none")
	return p
}
