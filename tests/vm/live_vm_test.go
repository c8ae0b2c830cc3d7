package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveTestKargs are the live image's kernel arguments in the VM tier,
// after mklive.sh's own: the serial console, a power-off instead of a
// shell on failure, flint's log on the console, and DHCP in the
// initramfs (carried to the installed system's first boot, as on a real
// machine).
var liveTestKargs = []string{"console=ttyS0", "panic=-1", "rd.shell=0", "rd.emergency=poweroff", "flint.console=1", "ip=dhcp"}

// liveImage is flint's own live ISO (mklive.sh) and its PXE artifacts.
type liveImage struct {
	iso                    string
	kernel, initrd, rootfs string
	defaultKargs           string
}

// TestLive boots flint's own live image, built as `make live-iso` builds
// it, in its three uses:
//
//   - iso-customize: flint iso customize names the disk, the installed
//     system's config, the image (an installer config) and a network
//     keyfile; QEMU boots the ISO from its El Torito record, the live
//     system installs the OS image over HTTP and reboots, the disk's
//     first boot provisions the config and its second changes nothing
//     (the bare-metal install scenario's checks);
//   - pxe-customize: the same through PXE, flint pxe customize of the
//     live initramfs booted with -kernel and -initrd as a PXE server hands
//     them out, checked on the disk without booting it;
//   - iso-ignition-embed: the live system itself provisioned from the
//     config embedded in the ISO (a PXE-to-live boot without a config
//     server).
//
// iso-customize-bench runs only under tests/bench/livebench.sh
// (FLINT_LIVE_BENCH=N): the live install and the first boot N times, a
// line of figures each.
func TestLive(t *testing.T) {
	for _, tool := range []string{"xorriso", "cpio", "zstd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("vm: skipped: the live image needs %s (.ci/run installs xorriso, cpio, zstd)", tool)
		}
	}
	requireOSImageTools(t)
	dir := t.TempDir()
	s := newSuite(t, dir)
	start := time.Now()
	live := s.buildLive(t, dir)
	fi, err := os.Stat(live.iso)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live ISO built in %s: %d bytes", time.Since(start).Round(time.Second), fi.Size())
	img := s.buildOSImage(t, dir)
	cs := serve(t, map[string]string{"/os.raw.xz": string(img.xz)})
	installer := writeFile(t, dir, "installer.yaml", "image-url: "+cs.url("/os.raw.xz")+"\ninsecure: true\n")
	dest := writeFile(t, dir, "demo.ign", installConfig)
	// customize stores a single --dest-ignition config as it is, ending in
	// one newline (src/live/customize.rs).
	destConfig := installConfig + "\n"
	keyfile := writeFile(t, dir, "ens3.nmconnection", "[connection]\nid=ens3\ntype=ethernet\n\n[ipv4]\nmethod=auto\n")

	t.Run("edits", func(t *testing.T) { testLiveEdits(t, s.flint, live, dest) })

	t.Run("iso-customize", func(t *testing.T) {
		tdir := t.TempDir()
		custom := filepath.Join(tdir, "custom.iso")
		run(t, "", nil, s.flint, "iso", "customize", "--dest-device", "/dev/vda", "--dest-ignition", dest,
			"--installer-config", installer, "--network-keyfile", keyfile, "-o", custom, live.iso)
		disk := img.blankDisk(t, tdir)
		c := s.boot(t, tdir, vm{Name: "live", CDROM: custom, Disks: []string{disk}, Net: true, Timeout: installBootTimeout})
		liveInstalled(t, c)
		if t.Failed() {
			return
		}
		const netArgs = "rd.neednet=1 ip=dhcp"
		img.checkInstalled(t, disk, destConfig, netArgs)
		if got := openExt4(t, disk, img.boot.start).mustCat("/coreos-firstboot-network/ens3.nmconnection"); !strings.Contains(got, "id=ens3") {
			t.Errorf("the keyfile on the installed boot filesystem = %q, want --network-keyfile's", got)
		}
		if t.Failed() {
			return
		}
		first := s.checkFirstBoot(t, tdir, img, disk, netArgs)
		reportLiveToFiles(t, c, first)
		if t.Failed() {
			return
		}
		s.checkSecondBoot(t, tdir, img, disk)
	})

	t.Run("iso-customize-bench", func(t *testing.T) {
		rounds := liveBenchRounds(t)
		if rounds == 0 {
			t.Skip("FLINT_LIVE_BENCH is not set: tests/bench/livebench.sh runs this")
		}
		tdir := t.TempDir()
		custom := filepath.Join(tdir, "custom.iso")
		run(t, "", nil, s.flint, "iso", "customize", "--dest-device", "/dev/vda", "--dest-ignition", dest,
			"--installer-config", installer, "--network-keyfile", keyfile, "-o", custom, live.iso)
		for round := 1; round <= rounds; round++ {
			rdir := filepath.Join(tdir, strconv.Itoa(round))
			if err := os.Mkdir(rdir, 0o755); err != nil {
				t.Fatal(err)
			}
			disk := img.blankDisk(t, rdir)
			c := s.boot(t, rdir, vm{Name: "live-" + strconv.Itoa(round), CDROM: custom, Disks: []string{disk}, Net: true, Timeout: installBootTimeout})
			liveInstalled(t, c)
			if t.Failed() {
				return
			}
			first := s.checkFirstBoot(t, rdir, img, disk, "rd.neednet=1 ip=dhcp")
			if t.Failed() {
				return
			}
			f, err := liveFigures(c, first)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			t.Logf("LIVEBENCH round=%d %s", round, f)
		}
	})

	t.Run("pxe-customize", func(t *testing.T) {
		tdir := t.TempDir()
		custom := filepath.Join(tdir, "custom-initrd.img")
		out := run(t, "", nil, s.flint, "pxe", "customize", "--dest-device", "/dev/vda", "--dest-ignition", dest,
			"--installer-config", installer, "-o", custom, live.initrd)
		if !strings.Contains(out, "ignition.firstboot ignition.platform.id=metal") {
			t.Errorf("pxe customize said %q, want the kernel arguments a PXE configuration needs", out)
		}
		// A PXE server hands out the initramfs, the rootfs and the
		// customisation as one initrd (iPXE's several initrd lines, or
		// pxelinux's initrd=a,b, concatenate them the same way).
		pxeInitrd := filepath.Join(tdir, "pxe-initrd.img")
		concat(t, pxeInitrd, custom, live.rootfs)
		disk := img.blankDisk(t, tdir)
		c := s.boot(t, tdir, vm{Name: "live-pxe", Kernel: live.kernel, Initrd: pxeInitrd,
			Args: strings.Fields(live.defaultKargs), Disks: []string{disk}, Net: true, Timeout: installBootTimeout})
		liveInstalled(t, c)
		if t.Failed() {
			return
		}
		img.checkInstalled(t, disk, destConfig, "rd.neednet=1 ip=dhcp")
	})

	t.Run("iso-ignition-embed", func(t *testing.T) {
		tdir := t.TempDir()
		cfg := writeFile(t, tdir, "live.bu", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        inline: provisioned live\n")
		embedded := filepath.Join(tdir, "embedded.iso")
		run(t, "", nil, s.flint, "iso", "ignition", "embed", "-i", cfg, "-o", embedded, live.iso)
		c := s.boot(t, tdir, vm{Name: "live-embed", CDROM: embedded})
		c.mustHave(t, "the user config is /config.ign from the initramfs", "files: stage finished",
			"flint-live-root: the live root is in memory", "flint-live: /etc/motd: provisioned live",
			"flint-live: nothing to install; powering off")
		if c.has("emergency.target") {
			t.Errorf("the live boot went to the emergency target")
		}
	})
}

// liveInstalled checks a live boot that installed and rebooted.
func liveInstalled(t *testing.T, c console) {
	t.Helper()
	c.mustHave(t, "flint-live-root: the live root is in memory", "files: stage finished",
		"flint-installer-generator: this boot installs", "flint install --config-file /etc/coreos/installer.d/0000-installer.yaml --config-file /etc/coreos/installer.d/0001-customize.yaml",
		"INFO     install complete dest=/dev/vda",
		"flint-live: rebooting into the installed disk")
	if c.has("emergency.target") {
		t.Errorf("the live boot went to the emergency target")
	}
}

// reportLiveToFiles logs the time from the live boot's kernel start to
// the end of the installed disk's files stage: the live boot's kernel
// time to its reboot, the first boot's time before its kernel (firmware,
// GRUB's disk reads: its wall time less its kernel time to power-off),
// and the first boot's kernel time to the files stage's end.
func reportLiveToFiles(t *testing.T, live, first console) {
	t.Helper()
	liveEnd, ok1 := consoleStamp(live.text, "reboot: Restarting system")
	files, ok2 := consoleStamp(first.text, "files: stage finished")
	firstEnd, ok3 := consoleStamp(first.text, "reboot: Power down")
	if !ok1 || !ok2 || !ok3 {
		t.Logf("figure: live kernel start → installed files stage: stamps missing (%v %v %v)", ok1, ok2, ok3)
		return
	}
	pre := first.wall.Seconds() - firstEnd
	t.Logf("figure: live kernel start → installed disk's files stage end: %.1f s (live %.1f s to reboot, first boot %.1f s before its kernel, %.1f s to files)",
		liveEnd+pre+files, liveEnd, pre, files)
}

// liveBenchRounds is FLINT_LIVE_BENCH, the rounds of the
// iso-customize-bench subtest that tests/bench/livebench.sh asks for; 0
// when it is unset.
func liveBenchRounds(t *testing.T) int {
	v := os.Getenv("FLINT_LIVE_BENCH")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("FLINT_LIVE_BENCH=%q, want a positive number of rounds", v)
	}
	return n
}

// liveFigures reads the seconds of one live install from the consoles,
// as key=value pairs for livebench.sh: total (the live boot's kernel
// start to the installed disk's files-stage end), live (the live kernel to
// its reboot), install (flint install --from-cmdline in the live root,
// between the uptimes mklive.sh's init prints before and after it), pre
// (the first boot's firmware and GRUB, its wall time less its kernel's
// time to its power-off) and first (the first boot's kernel start to its
// files stage's end).
func liveFigures(live, first console) (string, error) {
	var v [3]float64
	for i, p := range []struct {
		c   console
		sub string
	}{
		{live, "reboot: Restarting system"},
		{first, "files: stage finished"},
		{first, "reboot: Power down"},
	} {
		f, ok := consoleStamp(p.c.text, p.sub)
		if !ok {
			return "", fmt.Errorf("no stamped console line %q", p.sub)
		}
		v[i] = f
	}
	liveEnd, files, firstEnd := v[0], v[1], v[2]
	var up [2]float64
	for i, sub := range []string{"flint-live: installing, uptime ", "flint-live: install complete, uptime "} {
		_, after, ok := strings.Cut(live.text, sub)
		if ok {
			after, _, _ = strings.Cut(after, "\n")
			up[i], ok = parseSeconds(after)
		}
		if !ok {
			return "", fmt.Errorf("no console line %q with an uptime", sub)
		}
	}
	pre := first.wall.Seconds() - firstEnd
	return fmt.Sprintf("total=%.2f live=%.2f install=%.2f pre=%.2f first=%.2f",
		liveEnd+pre+files, liveEnd, up[1]-up[0], pre, files), nil
}

// parseSeconds parses s, a number of seconds such as /proc/uptime's.
func parseSeconds(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

// concat writes the files one after another to out.
func concat(t *testing.T, out string, files ...string) {
	t.Helper()
	var b []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, data...)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildLive builds the live ISO with mklive.sh, and its PXE artifacts
// with flint iso extract pxe.
func (s *suite) buildLive(t *testing.T, dir string) liveImage {
	t.Helper()
	live := liveImage{iso: filepath.Join(dir, "live.iso")}
	run(t, "", nil, "./mklive.sh", append([]string{s.flint, s.kver, s.kernel, filepath.Join(dir, "live"), live.iso}, liveTestKargs...)...)
	pxe := filepath.Join(dir, "pxe")
	if err := os.Mkdir(pxe, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "", nil, s.flint, "iso", "extract", "pxe", "-o", pxe, live.iso)
	live.kernel = filepath.Join(pxe, "live-vmlinuz")
	live.initrd = filepath.Join(pxe, "live-initrd.img")
	live.rootfs = filepath.Join(pxe, "live-rootfs.img")
	live.defaultKargs = strings.TrimSpace(run(t, "", nil, s.flint, "iso", "kargs", "show", live.iso))
	return live
}

// testLiveEdits checks, without booting, that flint's image commands work
// on the ISO mklive.sh built, reading the result back with xorriso (the
// tree as any ISO reader sees it) and with the commands' own show: the
// embedded config, the kernel-argument area in grub.cfg, customize's
// files, and a reset back to the image as built.
func testLiveEdits(t *testing.T, flint string, live liveImage, dest string) {
	dir := t.TempDir()
	extract := func(t *testing.T, iso, path string) []byte {
		t.Helper()
		x := filepath.Join(dir, "x")
		os.RemoveAll(x)
		run(t, "", nil, "xorriso", "-osirrox", "on", "-indev", iso, "-extract", "/"+path, x)
		b, err := os.ReadFile(x)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	iso := filepath.Join(dir, "edit.iso")
	concat(t, iso, live.iso)
	grubBefore := extract(t, iso, "boot/grub/grub.cfg")

	cfg := writeFile(t, dir, "c.ign", `{"ignition": {"version": "3.4.0"}}`)
	run(t, "", nil, flint, "iso", "ignition", "embed", "-i", cfg, iso)
	if got := run(t, "", nil, flint, "iso", "ignition", "show", iso); got != `{"ignition": {"version": "3.4.0"}}` {
		t.Errorf("iso ignition show after embed = %q", got)
	}
	area := filepath.Join(dir, "ignition.img")
	if err := os.WriteFile(area, extract(t, iso, "images/ignition.img"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, "", nil, flint, "dev", "show", "initrd", area); !strings.Contains(got, "config.ign") {
		t.Errorf("images/ignition.img as xorriso extracts it lists %q, want config.ign", got)
	}

	run(t, "", nil, flint, "iso", "kargs", "modify", "-a", "flint.test=1", "-d", "panic=-1", iso)
	want := strings.Replace(live.defaultKargs, " panic=-1", "", 1) + " flint.test=1"
	if got := strings.TrimSpace(run(t, "", nil, flint, "iso", "kargs", "show", iso)); got != want {
		t.Errorf("iso kargs show after modify = %q, want %q", got, want)
	}
	if grub := string(extract(t, iso, "boot/grub/grub.cfg")); !strings.Contains(grub, "\tlinux /images/pxeboot/vmlinuz "+want+"\n#") {
		t.Errorf("grub.cfg after kargs modify:\n%s", grub)
	}
	if got := strings.TrimSpace(run(t, "", nil, flint, "iso", "kargs", "show", "-d", iso)); got != live.defaultKargs {
		t.Errorf("iso kargs show -d = %q, want the defaults %q", got, live.defaultKargs)
	}

	run(t, "", nil, flint, "iso", "reset", iso)
	if grub := extract(t, iso, "boot/grub/grub.cfg"); string(grub) != string(grubBefore) {
		t.Errorf("grub.cfg after iso reset differs from the image's")
	}
	if got, err := runErr("", nil, flint, "iso", "ignition", "show", iso); err == nil || !strings.Contains(got, "No embedded Ignition config.") {
		t.Errorf("iso ignition show after reset = %q, %v, want upstream's refusal", got, err)
	}
	if fi, err := os.Stat(live.iso); err != nil {
		t.Fatal(err)
	} else if sectorsHash(t, iso, 0, fi.Size()/512) != sectorsHash(t, live.iso, 0, fi.Size()/512) {
		t.Errorf("the ISO after embed, kargs modify and reset is not the image as built, byte for byte")
	}

	custom := filepath.Join(dir, "custom.iso")
	run(t, "", nil, flint, "iso", "customize", "--dest-device", "/dev/vda", "--dest-ignition", dest,
		"--live-karg-append", "flint.custom=1", "-o", custom, live.iso)
	if got := run(t, "", nil, flint, "iso", "ignition", "show", custom); !strings.Contains(got, "/etc/coreos/installer.d/") || !strings.Contains(got, "/etc/coreos/dest.ign") {
		t.Errorf("the customised ISO's live config has no installer config or destination config:\n%s", got)
	}
	if grub := string(extract(t, custom, "boot/grub/grub.cfg")); !strings.Contains(grub, live.defaultKargs+" flint.custom=1\n#") {
		t.Errorf("grub.cfg of the customised ISO:\n%s", grub)
	}
	if err := exec.Command(flint, "iso", "customize", "--dest-device", "/dev/vda", custom).Run(); err == nil {
		t.Errorf("iso customize of a customised ISO succeeded, want a refusal without -f")
	}
}
