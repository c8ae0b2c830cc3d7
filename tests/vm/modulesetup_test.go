package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleSetupRequiresTools runs dracut/30flint/module-setup.sh's
// install() under bash with dracut's helpers replaced by stand-ins that
// record what they are asked (no dracut, no VM): a host without a
// required tool must stop the image build with a message naming every
// missing tool, and a complete host must install flint, the tools and
// every unit.
func TestModuleSetupRequiresTools(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	moddir := filepath.Join(repoRoot(t), "dracut", "30flint")
	// The stand-ins: find_binary fails for the tools in $MISSING; every
	// install helper appends its arguments to $LOG.
	const stubs = `
set -u
find_binary() { case " $MISSING " in *" $1 "*) return 1 ;; esac; echo "/usr/bin/$1"; }
dfatal() { echo "FATAL: $*" >> "$LOG"; }
inst_binary() { echo "inst_binary $*" >> "$LOG"; }
inst_multiple() { echo "inst_multiple $*" >> "$LOG"; }
inst_script() { echo "inst_script $*" >> "$LOG"; }
inst_simple() { [ -e "$1" ] || { echo "MISSING FILE $1" >> "$LOG"; return 1; }; echo "inst_simple $*" >> "$LOG"; }
ln_r() { echo "ln_r $*" >> "$LOG"; }
inst_rules() { echo "inst_rules $*" >> "$LOG"; }
systemdsystemunitdir=/usr/lib/systemd/system
systemdutildir=/usr/lib/systemd
. "$MODDIR/module-setup.sh"
moddir=$MODDIR
install
echo "install returned $?" >> "$LOG"
`
	run := func(t *testing.T, missing string) (string, error) {
		dir := t.TempDir()
		log := filepath.Join(dir, "log")
		initdir := filepath.Join(dir, "initrd")
		cmd := exec.Command("bash", "-c", stubs)
		cmd.Env = append(os.Environ(), "MISSING="+missing, "LOG="+log, "MODDIR="+moddir, "initdir="+initdir)
		out, err := cmd.CombinedOutput()
		got, _ := os.ReadFile(log)
		if len(out) > 0 {
			t.Logf("bash output:\n%s", out)
		}
		return string(got), err
	}

	t.Run("missing", func(t *testing.T) {
		log, err := run(t, "sfdisk useradd")
		if err == nil {
			t.Fatalf("install() went on without sfdisk and useradd:\n%s", log)
		}
		if !strings.Contains(log, "FATAL: flint: required tools missing on this host: sfdisk useradd") {
			t.Errorf("the message does not name both missing tools:\n%s", log)
		}
		if strings.Contains(log, "inst_binary") {
			t.Errorf("install() installed something before failing:\n%s", log)
		}
	})
	t.Run("complete", func(t *testing.T) {
		// flint itself comes from PATH here (no binary beside the script
		// in the checkout).
		log, err := run(t, "")
		if err != nil || !strings.Contains(log, "install returned 0") {
			t.Fatalf("install() failed on a complete host: %v\n%s", err, log)
		}
		for _, want := range []string{
			"inst_binary /usr/bin/flint /usr/bin/flint",
			"inst_multiple sfdisk blkid wipefs mkfs.ext4 mkswap",
			"inst_multiple -o mkfs.xfs mkfs.btrfs mkfs.fat mdadm cryptsetup setfiles clevis",
			"inst_script " + moddir + "/flint-generator /usr/lib/systemd/system-generators/flint-generator",
			"ln_r /usr/lib/systemd/system/flint-files.service /usr/lib/systemd/system/flint-complete.target.requires/flint-files.service",
			"ln_r /usr/lib/systemd/system/flint-hostname.service /usr/lib/systemd/system/flint-complete.target.requires/flint-hostname.service",
			// Afterburn's initramfs unit names, aliases of flint's.
			"ln_r /usr/lib/systemd/system/flint-hostname.service /usr/lib/systemd/system/afterburn-hostname.service",
			"ln_r /usr/lib/systemd/system/flint-network-kargs.service /usr/lib/systemd/system/afterburn-network-kargs.service",
			"ln_r /usr/lib/systemd/system/flint-render-ignition.service /usr/lib/systemd/system/afterburn-ignition-fragment.service",
			// Ignition's names, and its binary's.
			"ln_r /usr/lib/systemd/system/flint-fetch-offline.service /usr/lib/systemd/system/ignition-fetch-offline.service",
			"ln_r /usr/lib/systemd/system/flint-files.service /usr/lib/systemd/system/ignition-files.service",
			"ln_r /usr/lib/systemd/system/flint-remount-sysroot.service /usr/lib/systemd/system/ignition-remount-sysroot.service",
			"ln_r /usr/lib/systemd/system/flint-complete.target /usr/lib/systemd/system/ignition-complete.target",
			"ln_r /usr/lib/systemd/system/flint-diskful-subsequent.target /usr/lib/systemd/system/ignition-diskful-subsequent.target",
			"ln_r /usr/bin/flint /usr/bin/ignition",
			// What Ignition's module ships for clevis bindings and config
			// drives on CD-ROM (coreos/ignition dracut/30ignition).
			"inst_multiple -o clevis-encrypt-sss clevis-encrypt-tang clevis-encrypt-tpm2 clevis-luks-bind clevis-luks-common-functions clevis-luks-unlock pwmake tpm2_create tpm2_createpolicy",
			"inst_simple " + moddir + "/flint-luks.conf /etc/security/pwquality.conf.d/flint-luks.conf",
			"inst_rules 60-cdrom_id.rules",
		} {
			if !strings.Contains(log, want) {
				t.Errorf("install() did not run %q:\n%s", want, log)
			}
		}
		if strings.Contains(log, "MISSING FILE") || strings.Contains(log, "FATAL") {
			t.Errorf("install() refers to a file the module does not have:\n%s", log)
		}
		// Every unit and target in the module directory is installed.
		entries, err := os.ReadDir(moddir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); ext == ".service" || ext == ".target" {
				if !strings.Contains(log, "inst_simple "+filepath.Join(moddir, e.Name())+" ") {
					t.Errorf("%s is in the module but install() does not install it", e.Name())
				}
			}
		}
	})
}

// TestModuleSetupKernelModules runs module-setup.sh's installkernel() with
// dracut's instmods replaced by a stand-in: the hypervisor channels
// (Hyper-V's KVP, the vsock transport of Apple's hypervisor) go into every
// image, not only those built on such a host, as in Ignition's module.
func TestModuleSetupKernelModules(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	moddir := filepath.Join(repoRoot(t), "dracut", "30flint")
	log := filepath.Join(t.TempDir(), "log")
	cmd := exec.Command("bash", "-c", `set -u
instmods() { echo "instmods hostonly=${hostonly-unset} $*" >> "$LOG"; }
. "$MODDIR/module-setup.sh"
installkernel
echo "installkernel returned $?" >> "$LOG"`)
	cmd.Env = append(os.Environ(), "LOG="+log, "MODDIR="+moddir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installkernel: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(log)
	for _, want := range []string{
		"instmods hostonly= hv_utils vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport",
		"installkernel returned 0",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("installkernel did not run %q:\n%s", want, got)
		}
	}
}
