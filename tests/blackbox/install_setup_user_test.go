//go:build linux

package blackbox

// flint-setup-user (dracut/30flint/flint-setup-user.sh) run as the
// initramfs runs it, with its paths moved into a temp dir: the config of
// an appended PXE initrd, the config and network keyfiles `flint install`
// left on a real ext4 filesystem labelled boot on a loop device, and a
// live boot that looks for neither; then flint-firstboot-done removing
// the config and the stamp.

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
	writeFile(t, filepath.Join(mnt, "ignition.firstboot"), "set ignition_network_kcmdline=\"rd.neednet=1 ip=dhcp\"\n", 0o644)
	writeFile(t, filepath.Join(mnt, "coreos-firstboot-network/ens2.nmconnection"), "[connection]\nid=ens2\n", 0o600)
	writeFile(t, filepath.Join(mnt, "loader/entries/os.conf"), "title os\n", 0o644)
	// A first-boot stamp the files stage left (its success removes it).
	writeFile(t, filepath.Join(mnt, "flint.firstboot-stamp"), `{"stage":"files"}`, 0o600)
	unmount(t, mnt)
	writeFile(t, filepath.Join(dir, "initrd/config.ign"), `{"from": "initrd"}`, 0o644)

	var nmDir string
	run := func(t *testing.T, cmdline string, initrd bool) (string, string) {
		t.Helper()
		work := t.TempDir()
		nmDir = filepath.Join(work, "run/NetworkManager/system-connections")
		writeFile(t, filepath.Join(nmDir, "default_connection.nmconnection"), "from the command line\n", 0o600)
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
			"FLINT_SETUP_USER_NM="+nmDir,
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
	// The install's keyfiles replace the command line's.
	if names := dirNames(t, nmDir); strings.Join(names, " ") != "ens2.nmconnection" {
		t.Errorf("disk boot: NetworkManager keyfiles %v, want only the install's ens2.nmconnection", names)
	} else if fi, _ := os.Stat(filepath.Join(nmDir, "ens2.nmconnection")); fi.Mode() != 0o600 {
		t.Errorf("keyfile mode %v, want 0600", fi.Mode())
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
	if got, _ := run(t, "BOOT_IMAGE=/images/pxeboot/vmlinuz root=tmpfs ignition.firstboot ignition.platform.id=metal", false); got != "" {
		t.Errorf("flint's live image without an initrd config: user.ign = %q, want none", got)
	}
	if names := dirNames(t, nmDir); strings.Join(names, " ") != "default_connection.nmconnection" {
		t.Errorf("live boot: NetworkManager keyfiles %v, want the command line's left alone", names)
	}

	// Without a filesystem labelled boot, only an installed disk's first
	// boot (platform metal, no config URL) waits for one; a cloud or VM
	// image's first boot looks once and goes on.
	for _, tt := range []struct{ cmdline, want string }{
		{"root=LABEL=root ignition.firstboot ignition.platform.id=qemu", "not waiting for one"},
		{"root=LABEL=root ignition.firstboot", "not waiting for one"},
		{"root=LABEL=root ignition.firstboot ignition.platform.id=metal ignition.config.url=http://10.0.2.2/c.ign", "not waiting for one"},
		{"root=LABEL=root ignition.firstboot ignition.platform.id=metal", "no filesystem labelled boot after 1s"},
	} {
		work := t.TempDir()
		writeFile(t, filepath.Join(work, "cmdline"), tt.cmdline+"\n", 0o644)
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(),
			"FLINT_SETUP_USER_DEST="+filepath.Join(work, "run/ignition"),
			"FLINT_SETUP_USER_INITRD="+filepath.Join(work, "none.ign"),
			"FLINT_SETUP_USER_BOOT="+filepath.Join(work, "no-such-device"),
			"FLINT_SETUP_USER_CMDLINE="+filepath.Join(work, "cmdline"),
			"FLINT_SETUP_USER_TIMEOUT=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("flint-setup-user with %q and no boot filesystem = %v, %q; want %q", tt.cmdline, err, out, tt.want)
		}
		if _, err := os.Stat(filepath.Join(work, "run/ignition/user.ign")); err == nil {
			t.Errorf("flint-setup-user with %q wrote a user config from nowhere", tt.cmdline)
		}
	}

	// flint-firstboot-done: nothing on a live boot, the config and the
	// stamps (only them) on a disk boot.
	done, err := filepath.Abs("../../dracut/30flint/flint-firstboot-done.sh")
	if err != nil {
		t.Fatal(err)
	}
	finish := func(t *testing.T, cmdline string) string {
		t.Helper()
		work := t.TempDir()
		writeFile(t, filepath.Join(work, "cmdline"), cmdline+"\n", 0o644)
		cmd := exec.Command("sh", done)
		cmd.Env = append(os.Environ(),
			"FLINT_FIRSTBOOT_DONE_BOOT="+l.partNode(1),
			"FLINT_FIRSTBOOT_DONE_CMDLINE="+filepath.Join(work, "cmdline"),
			"FLINT_FIRSTBOOT_DONE_MNT="+filepath.Join(work, "mnt"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("flint-firstboot-done: %v\n%s", err, out)
		}
		return string(out)
	}
	listBoot := func(t *testing.T) string {
		t.Helper()
		m := mountDir(t, t.TempDir(), l.partNode(1), "ext4", true)
		defer unmount(t, m)
		var files []string
		filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(m, p)
				files = append(files, rel)
			}
			return nil
		})
		return strings.Join(files, " ")
	}
	all := "coreos-firstboot-network/ens2.nmconnection flint.firstboot-stamp ignition/config.ign ignition.firstboot loader/entries/os.conf"
	finish(t, "BOOT_IMAGE=/vmlinuz root=live:http://x/rootfs.img ignition.firstboot")
	if got := listBoot(t); got != all {
		t.Errorf("after flint-firstboot-done on a live boot: %s, want %s", got, all)
	}
	out := finish(t, "BOOT_IMAGE=/vmlinuz root=LABEL=root ignition.firstboot")
	if got, want := listBoot(t), "coreos-firstboot-network/ens2.nmconnection loader/entries/os.conf"; got != want {
		t.Errorf("after flint-firstboot-done: %s, want %s (%s)", got, want, out)
	}
	// A second run finds nothing to do and says nothing.
	if out := finish(t, "BOOT_IMAGE=/vmlinuz root=LABEL=root"); out != "" {
		t.Errorf("flint-firstboot-done with nothing left printed %q", out)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), filepath.Base(dir)) {
		t.Errorf("something is still mounted under %s", dir)
	}
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
