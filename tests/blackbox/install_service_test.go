package blackbox

// flint-installer (dracut/systemd/flint-installer.sh), the live
// environment's installer, run with its kernel command line, config
// directories and commands moved into a temp dir: a fake flint and
// systemctl record their arguments. Needs neither root nor disks.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallerService(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script, err := filepath.Abs("../../dracut/systemd/flint-installer.sh")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		flint, systemctl string
		out              string
		err              error
		configLeft       bool
	}
	run := func(t *testing.T, cmdline string, configFile bool, flintFails bool) result {
		t.Helper()
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "cmdline"), cmdline+"\n", 0o644)
		exit := "0"
		if flintFails {
			exit = "1"
		}
		// The fakes write one argument a line.
		writeFile(t, filepath.Join(dir, "flint"), "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > \""+dir+"/flint.args\"\nexit "+exit+"\n", 0o755)
		writeFile(t, filepath.Join(dir, "systemctl"), "#!/bin/sh\necho \"$@\" > \""+dir+"/systemctl.args\"\n", 0o755)
		cfgDir := filepath.Join(dir, "installer.d")
		os.MkdirAll(cfgDir, 0o755)
		if configFile {
			writeFile(t, filepath.Join(cfgDir, "10-disk.yaml"), "dest-device: /dev/vdb\n", 0o644)
		}
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(),
			"FLINT_INSTALLER_CMDLINE="+filepath.Join(dir, "cmdline"),
			"FLINT_INSTALLER_CONFIG_DIRS="+filepath.Join(dir, "none.d")+" "+cfgDir,
			"FLINT_INSTALLER_FLINT="+filepath.Join(dir, "flint"),
			"FLINT_INSTALLER_SYSTEMCTL="+filepath.Join(dir, "systemctl"),
			"FLINT_INSTALLER_UDEVADM=true")
		out, err := cmd.CombinedOutput()
		f, _ := os.ReadFile(filepath.Join(dir, "flint.args"))
		s, _ := os.ReadFile(filepath.Join(dir, "systemctl.args"))
		_, statErr := os.Stat(cfgDir)
		return result{flint: string(f), systemctl: strings.TrimSpace(string(s)), out: string(out), err: err, configLeft: statErr == nil}
	}
	lines := func(args ...string) string { return strings.Join(args, "\n") + "\n" }

	t.Run("coreos kargs", func(t *testing.T) {
		r := run(t, "BOOT_IMAGE=/vmlinuz ip=dhcp nameserver=10.0.2.3 rd.dasd=0.0.0100 coreos.inst.install_dev=vda "+
			"coreos.inst.ignition_url=http://10.0.2.2/c.ign coreos.inst.image_url=http://10.0.2.2/os.raw.xz "+
			"coreos.inst.platform_id=qemu coreos.inst.save_partlabel=data* coreos.inst.save_partindex=5- coreos.inst.insecure quiet", false, false)
		if r.err != nil {
			t.Fatalf("flint-installer: %v\n%s", r.err, r.out)
		}
		want := lines("install", "/dev/vda", "--ignition-url", "http://10.0.2.2/c.ign", "--insecure-ignition",
			"--append-karg", "rd.dasd=0.0.0100", "--firstboot-args", "rd.neednet=1 ip=dhcp nameserver=10.0.2.3 ",
			"--image-url", "http://10.0.2.2/os.raw.xz", "--platform", "qemu", "--save-partlabel", "data*",
			"--save-partindex", "5-", "--insecure", "--fetch-retries", "infinite")
		if r.flint != want {
			t.Errorf("flint got\n%s\nwant\n%s", r.flint, want)
		}
		if r.systemctl != "--no-block reboot" {
			t.Errorf("systemctl got %q, want a reboot", r.systemctl)
		}
		if !strings.Contains(r.out, "without /dev/ is deprecated") {
			t.Errorf("no note on the bare device name:\n%s", r.out)
		}
	})

	t.Run("flint kargs, config file, skip reboot", func(t *testing.T) {
		r := run(t, "flint.inst.ignition_url=skip coreos.inst.image_url=http://a/x flint.inst.image_url=http://b/y flint.inst.skip_reboot", true, false)
		if r.err != nil {
			t.Fatalf("flint-installer: %v\n%s", r.err, r.out)
		}
		if !strings.HasPrefix(r.flint, "install\n--config-file\n") || !strings.Contains(r.flint, "\n--image-url\nhttp://b/y\n") ||
			strings.Contains(r.flint, "--ignition-url") || strings.Contains(r.flint, "--insecure\n") {
			t.Errorf("flint got\n%s", r.flint)
		}
		if r.systemctl != "" {
			t.Errorf("rebooted (%q) despite skip_reboot", r.systemctl)
		}
		if r.configLeft {
			t.Errorf("the installer config directory was left behind after the install")
		}
	})

	t.Run("failure", func(t *testing.T) {
		r := run(t, "coreos.inst.install_dev=/dev/vda coreos.inst.image_url=http://a/x", true, true)
		if r.err == nil {
			t.Errorf("a failed flint install made the script succeed")
		}
		if r.systemctl != "" || !r.configLeft {
			t.Errorf("after a failure: systemctl %q, config left %v; want no reboot and the config kept", r.systemctl, r.configLeft)
		}
	})

	t.Run("no device", func(t *testing.T) {
		r := run(t, "coreos.inst.image_url=http://a/x", false, false)
		if r.err == nil || !strings.Contains(r.out, "no install device") || r.flint != "" {
			t.Errorf("without a device: %v, flint %q\n%s", r.err, r.flint, r.out)
		}
	})
}
