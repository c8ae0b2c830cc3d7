package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stampArgs is the line the generator adds to flint.env for cmdline: the
// first-boot stamp's arguments on a disk's first boot (root= of a disk,
// ignition.firstboot), unless flint.firstboot.stamp=0 is the last word
// on it. Written from the rules, not from the script.
func stampArgs(cmdline string) string {
	firstboot, disk, on := false, false, true
	for _, w := range strings.Fields(cmdline) {
		switch {
		case w == "ignition.firstboot" || strings.HasPrefix(w, "ignition.firstboot="):
			v := strings.TrimPrefix(strings.TrimPrefix(w, "ignition.firstboot"), "=")
			firstboot = w == "ignition.firstboot" || !slices.Contains([]string{"", "0", "no", "off"}, v)
		case w == "root=tmpfs" || strings.HasPrefix(w, "root=live:"):
			disk = false
		case strings.HasPrefix(w, "root="):
			disk = true
		case strings.HasPrefix(w, "flint.firstboot.stamp="):
			on = !slices.Contains([]string{"", "0", "no", "off"}, strings.TrimPrefix(w, "flint.firstboot.stamp="))
		}
	}
	if !firstboot || !disk || !on {
		return ""
	}
	return "FLINT_STAMP_ARGS=-firstboot-stamp /run/flint/stamp/flint.firstboot-stamp -firstboot-stamp-device /dev/disk/by-label/boot\n"
}

// TestGenerator runs dracut/30flint/flint-generator with made-up kernel
// command lines (no VM): which units it pulls in, and the platform it
// records. The rules are Ignition's generator's (coreos/ignition
// dracut/30ignition/ignition-generator).
func TestGenerator(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	firstBoot := []string{
		"emergency.target.wants/flint-failure.service",
		"emergency.target.wants/flint-report-emergency.service",
		"emergency.target.wants/flint-report-failure.service",
		"flint-complete.target.requires/flint-diskful.target",
		"initrd.target.requires/flint-complete.target",
		"initrd.target.wants/flint-firstboot-done.service",
		"initrd.target.wants/flint-report.service",
	}
	otherBoot := []string{
		"flint-subsequent.target.wants/flint-diskful-subsequent.target",
		"initrd.target.wants/flint-subsequent.target",
	}
	withConsole := append([]string{"flint-complete.target.wants/flint-console.service"}, firstBoot...)
	slices.Sort(withConsole)
	cases := []struct {
		cmdline  string
		links    []string
		platform string
		// network is a .network file the image has in
		// /etc/systemd/network.
		network string
	}{
		{"root=LABEL=root ignition.firstboot", firstBoot, "metal", ""},
		{"ignition.firstboot=1 ignition.platform.id=qemu", firstBoot, "qemu", ""},
		{"ignition.firstboot=anything", firstBoot, "metal", ""},
		{"ignition.firstboot=0", otherBoot, "metal", ""},
		{"ignition.firstboot=no", otherBoot, "metal", ""},
		{"ignition.firstboot=off", otherBoot, "metal", ""},
		{"ignition.firstboot=", otherBoot, "metal", ""},
		{"root=/dev/vda1 quiet", otherBoot, "metal", ""},
		// The last occurrence wins.
		{"ignition.firstboot ignition.firstboot=0", otherBoot, "metal", ""},
		{"ignition.firstboot=0 ignition.firstboot", firstBoot, "metal", ""},
		{"ignition.platform.id=aws ignition.platform.id=gcp ignition.firstboot", firstBoot, "gcp", ""},
		// An empty platform is the default.
		{"ignition.platform.id= ignition.firstboot", firstBoot, "metal", ""},
		// Words that look like file patterns stay words.
		{"ignition.firstboot ignition.platform.id=* x=[a]", firstBoot, "*", ""},
		{"ignition.firstboot flint.console", withConsole, "metal", ""},
		{"ignition.firstboot flint.console=1 flint.console=0", firstBoot, "metal", ""},
		{"flint.console", otherBoot, "metal", ""},
		// systemd-networkd waits for flint-neednet unless ip= or the
		// image configured it.
		{"ignition.firstboot ip=dhcp", firstBoot, "metal", ""},
		{"ignition.firstboot rd.neednet=1 ip=10.0.0.2::10.0.0.1:255.255.255.0::eth0:none", firstBoot, "metal", ""},
		{"ignition.firstboot", firstBoot, "metal", "10-image.network"},
		{"ip=dhcp", otherBoot, "metal", ""},
		// The first-boot stamp: on a disk's first boot only (stampArgs).
		{"root=UUID=1234 ignition.firstboot ignition.platform.id=qemu", firstBoot, "qemu", ""},
		{"root=LABEL=root ignition.firstboot flint.firstboot.stamp=0", firstBoot, "metal", ""},
		{"root=LABEL=root ignition.firstboot flint.firstboot.stamp=0 flint.firstboot.stamp=1", firstBoot, "metal", ""},
		{"root=live:http://10.0.2.2/rootfs.img ignition.firstboot", firstBoot, "metal", ""},
		{"root=tmpfs ignition.firstboot", firstBoot, "metal", ""},
		{"root=LABEL=root flint.firstboot.stamp=1", otherBoot, "metal", ""},
	}
	gen := filepath.Join(repoRoot(t), "dracut", "30flint", "flint-generator")
	for _, c := range cases {
		t.Run(c.cmdline, func(t *testing.T) {
			dir := t.TempDir()
			cmdline := filepath.Join(dir, "cmdline")
			env := filepath.Join(dir, "flint.env")
			units := filepath.Join(dir, "units")
			network := filepath.Join(dir, "network")
			if err := os.Mkdir(network, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.network != "" {
				if err := os.WriteFile(filepath.Join(network, c.network), []byte("[Match]\nName=eth0\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// /proc/cmdline ends in a newline; a file without one is read
			// all the same.
			if err := os.WriteFile(cmdline, []byte(c.cmdline+strings.Repeat("\n", len(c.cmdline)%2)), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", gen, units, units+"-early", units+"-late")
			cmd.Env = append(os.Environ(), "FLINT_GENERATOR_CMDLINE="+cmdline, "FLINT_GENERATOR_ENV="+env,
				"FLINT_GENERATOR_LOG="+filepath.Join(dir, "log"), "FLINT_GENERATOR_NETWORK_DIR="+network,
				"FLINT_GENERATOR_NO_STAMP="+filepath.Join(dir, "no-stamp"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("flint-generator: %v\n%s", err, out)
			}
			var links []string
			_ = filepath.WalkDir(units, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type()&os.ModeSymlink != 0 {
					rel, _ := filepath.Rel(units, p)
					links = append(links, rel)
					target, _ := os.Readlink(p)
					if want := "/usr/lib/systemd/system/" + d.Name(); target != want {
						t.Errorf("%s -> %s, want -> %s", rel, target, want)
					}
				}
				return nil
			})
			slices.Sort(links)
			if !slices.Equal(links, c.links) {
				t.Errorf("generator(%q) links:\n  %s\nwant:\n  %s", c.cmdline, strings.Join(links, "\n  "), strings.Join(c.links, "\n  "))
			}
			// The root's check waits for the disks stage, and is skipped
			// when the stage made the root, on the first boot only.
			dropIn, err := os.ReadFile(filepath.Join(units, "systemd-fsck-root.service.d", "flint.conf"))
			firstboot := slices.Contains(c.links, "initrd.target.requires/flint-complete.target")
			switch {
			case firstboot && (err != nil || !strings.Contains(string(dropIn), "ConditionPathExists=!/run/ignition/root-formatted") ||
				!strings.Contains(string(dropIn), "After=flint-disks.service")):
				t.Errorf("generator(%q): systemd-fsck-root.service.d/flint.conf = %q, %v; want the flag's condition after the disks stage", c.cmdline, dropIn, err)
			case !firstboot && err == nil:
				t.Errorf("generator(%q) wrote a drop-in for systemd-fsck-root.service on a boot that is not the first", c.cmdline)
			}
			// systemd-networkd waits for flint-neednet's .network on a
			// first boot whose network neither ip= nor the image set up.
			dropIn, err = os.ReadFile(filepath.Join(units, "systemd-networkd.service.d", "flint.conf"))
			wantNetworkd := firstboot && !strings.Contains(" "+c.cmdline, " ip=") && c.network == ""
			switch {
			case wantNetworkd && (err != nil || !strings.Contains(string(dropIn), "After=flint-neednet.service")):
				t.Errorf("generator(%q): systemd-networkd.service.d/flint.conf = %q, %v; want it after flint-neednet", c.cmdline, dropIn, err)
			case !wantNetworkd && err == nil:
				t.Errorf("generator(%q, image network %q) ordered systemd-networkd after flint-neednet: %q", c.cmdline, c.network, dropIn)
			}
			got, err := os.ReadFile(env)
			if err != nil {
				t.Fatal(err)
			}
			platformLine := "PLATFORM_ID=" + c.platform + "\n"
			if want := platformLine + stampArgs(c.cmdline); string(got) != want {
				t.Errorf("generator(%q) wrote %q, want %q", c.cmdline, got, want)
			}
			// Ignition's units read the same platform from ignition.env.
			if ign, err := os.ReadFile(filepath.Join(dir, "ignition.env")); string(ign) != platformLine {
				t.Errorf("generator(%q) wrote ignition.env %q (%v), want %q", c.cmdline, ign, err, platformLine)
			}
		})
	}
}

// TestGeneratorNoStampFile: a distro turns the first-boot stamp off with a
// file in the initramfs; the generator says why in its log.
func TestGeneratorNoStampFile(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	gen := filepath.Join(repoRoot(t), "dracut", "30flint", "flint-generator")
	for _, off := range []bool{false, true} {
		dir := t.TempDir()
		cmdline := filepath.Join(dir, "cmdline")
		if err := os.WriteFile(cmdline, []byte("root=LABEL=root ignition.firstboot\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		noStamp := filepath.Join(dir, "no-firstboot-stamp")
		if off {
			if err := os.WriteFile(noStamp, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		units := filepath.Join(dir, "units")
		cmd := exec.Command("sh", gen, units, units+"-early", units+"-late")
		cmd.Env = append(os.Environ(), "FLINT_GENERATOR_CMDLINE="+cmdline, "FLINT_GENERATOR_ENV="+filepath.Join(dir, "flint.env"),
			"FLINT_GENERATOR_LOG="+filepath.Join(dir, "log"), "FLINT_GENERATOR_NETWORK_DIR="+filepath.Join(dir, "network"),
			"FLINT_GENERATOR_NO_STAMP="+noStamp)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("flint-generator: %v\n%s", err, out)
		}
		env, _ := os.ReadFile(filepath.Join(dir, "flint.env"))
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		if got := strings.Contains(string(env), "FLINT_STAMP_ARGS="); got == off {
			t.Errorf("generator with %s there: %v: stamp arguments in flint.env %v, want %v:\n%s", noStamp, off, got, !off, env)
		}
		if off && !strings.Contains(string(log), "no first-boot stamp: "+noStamp) {
			t.Errorf("generator with %s: log does not say why there is no stamp:\n%s", noStamp, log)
		}
	}
}

// TestStageUnitsPassStampArgs: every stage unit (and so its Ignition
// name, a symlink to it) passes the generator's stamp arguments to flint
// run; the umount stage (ExecStop) comes after the files stage removed
// the stamp and reads none.
func TestStageUnitsPassStampArgs(t *testing.T) {
	moddir := filepath.Join(repoRoot(t), "dracut", "30flint")
	for _, stage := range []string{"fetch-offline", "fetch", "kargs", "disks", "mount", "files"} {
		b, err := os.ReadFile(filepath.Join(moddir, "flint-"+stage+".service"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(line, "ExecStart="):
				if !strings.Contains(line, "-stage "+stage+" $FLINT_STAMP_ARGS $FLINT_ARGS") {
					t.Errorf("flint-%s.service: %s, want the stage's run with $FLINT_STAMP_ARGS", stage, line)
				}
			case strings.HasPrefix(line, "ExecStop=") && strings.Contains(line, "FLINT_STAMP_ARGS"):
				t.Errorf("flint-%s.service: %s passes the stamp to the umount stage", stage, line)
			}
		}
		if !strings.Contains(string(b), "EnvironmentFile=/run/flint.env") {
			t.Errorf("flint-%s.service does not read /run/flint.env", stage)
		}
	}
}
