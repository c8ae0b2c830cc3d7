package blackbox

// flint-setup-user (dracut/30flint/flint-setup-user.sh) run as the
// initramfs runs it, with its paths moved into a temp dir: the config of
// an appended PXE initrd, the config `flint install` left on a real ext4
// filesystem labelled boot on a loop device, and a live boot that looks
// for neither.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetupUser(t *testing.T) {
	requireDisks(t)
	script, err := filepath.Abs("../../dracut/30flint/flint-setup-user.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := attach(t, dir, 0, 16, 512)
	sh(t, "sgdisk", "-n1:2048:0", "-c1:boot", l.dev)
	rescan(t, l, []int{1})
	sh(t, "mkfs.ext4", "-q", "-L", "boot", l.partNode(1))
	mnt := mountDir(t, dir, l.partNode(1), "ext4", false)
	writeFile(t, filepath.Join(mnt, "ignition/config.ign"), `{"from": "boot"}`, 0o600)
	unmount(t, mnt)
	writeFile(t, filepath.Join(dir, "initrd/config.ign"), `{"from": "initrd"}`, 0o644)

	run := func(t *testing.T, cmdline string, initrd bool) (string, string) {
		t.Helper()
		work := t.TempDir()
		writeFile(t, filepath.Join(work, "cmdline"), cmdline+"\n", 0o644)
		initrdConfig := filepath.Join(work, "none.ign")
		if initrd {
			initrdConfig = filepath.Join(dir, "initrd/config.ign")
		}
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(),
			"FLINT_SETUP_USER_DEST="+filepath.Join(work, "run/ignition"),
			"FLINT_SETUP_USER_INITRD="+initrdConfig,
			"FLINT_SETUP_USER_BOOT="+l.partNode(1),
			"FLINT_SETUP_USER_CMDLINE="+filepath.Join(work, "cmdline"),
			"FLINT_SETUP_USER_MNT="+filepath.Join(work, "mnt"),
			"FLINT_SETUP_USER_TIMEOUT=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("flint-setup-user: %v\n%s", err, out)
		}
		got, _ := os.ReadFile(filepath.Join(work, "run/ignition/user.ign"))
		if len(got) > 0 {
			fi, _ := os.Stat(filepath.Join(work, "run/ignition/user.ign"))
			if fi.Mode() != 0o600 {
				t.Errorf("user.ign mode %v, want 0600", fi.Mode())
			}
		}
		if _, err := os.Stat(filepath.Join(work, "mnt")); err == nil {
			t.Errorf("the boot filesystem's mount point was left behind")
		}
		return string(got), string(out)
	}

	if got, out := run(t, "BOOT_IMAGE=/vmlinuz root=LABEL=root ignition.firstboot", false); got != `{"from": "boot"}` || !strings.Contains(out, "labelled boot") {
		t.Errorf("disk boot: user.ign = %q (%s), want the boot filesystem's config", got, out)
	}
	if got, _ := run(t, "BOOT_IMAGE=/vmlinuz root=LABEL=root ignition.firstboot", true); got != `{"from": "initrd"}` {
		t.Errorf("disk boot with an appended initrd: user.ign = %q, want the initrd's config", got)
	}
	if got, _ := run(t, "BOOT_IMAGE=/vmlinuz ignition.firstboot ignition.platform.id=metal", true); got != `{"from": "initrd"}` {
		t.Errorf("PXE live boot: user.ign = %q, want the initrd's config", got)
	}
	if got, _ := run(t, "BOOT_IMAGE=/vmlinuz root=live:http://x/rootfs.img ignition.firstboot", false); got != "" {
		t.Errorf("live boot without an initrd config: user.ign = %q, want none", got)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), filepath.Base(dir)) {
		t.Errorf("something is still mounted under %s", dir)
	}
}
