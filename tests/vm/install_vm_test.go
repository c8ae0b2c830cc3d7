package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installConfig is the installed system's config: a data partition after
// the image's root with an ext4 filesystem and a file on it, a file in
// /etc, a user with an SSH key, an enabled unit.
const installConfig = `{
  "ignition": {"version": "3.4.0"},
  "storage": {
    "disks": [{"device": "/dev/vda", "partitions": [{"number": 4, "label": "data", "sizeMiB": 32}]}],
    "filesystems": [{"device": "/dev/disk/by-partlabel/data", "format": "ext4", "label": "DATA", "path": "/var/data", "wipeFilesystem": true}],
    "files": [
      {"path": "/var/data/hello.txt", "mode": 420, "contents": {"source": "data:,installed%20by%20flint%0A"}},
      {"path": "/etc/motd", "mode": 420, "contents": {"source": "data:,bare%20metal%0A"}}
    ]
  },
  "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["` + sshKey + `"]}]},
  "systemd": {"units": [{"name": "hello.service", "enabled": true,
    "contents": "[Unit]\nDescription=hello\n\n[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n"}]}
}`

// installBootTimeout bounds each of the scenario's boots: the live one
// downloads, decompresses and writes the image, and the disk boots load a
// compressed initramfs through GRUB's BIOS disk reads, all under
// software emulation (3 minutes each were seen on a loaded machine).
const installBootTimeout = 10 * time.Minute

// testInstall is the bare-metal install, end to end, in three boots:
//
//  1. live: flint's initramfs booted with rd.systemd.unit=
//     flint-installer-post.target (a live system that runs from its
//     initramfs) and coreos.inst.* arguments: the live installer's
//     generator and units run flint install --from-cmdline, which
//     fetches the image (xz) and the config from the test's server,
//     writes them to /dev/vda and reboots (QEMU's -no-reboot ends it);
//  2. first: the disk boots through GRUB (no -kernel): GRUB finds the
//     stamp and adds ignition.firstboot with the network arguments the
//     live boot had; flint takes the config from the boot filesystem,
//     provisions, and removes the config and the stamp;
//  3. second: GRUB adds nothing, nothing of flint runs, nothing changes.
func (s *suite) testInstall(t *testing.T) {
	t.Parallel()
	var missing []string
	for _, tool := range []string{"grub-mkimage", "zstd", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat("/usr/lib/grub/i386-pc/boot.img"); err != nil {
		missing = append(missing, "/usr/lib/grub/i386-pc (grub-pc-bin)")
	}
	if len(missing) > 0 {
		t.Skipf("vm: skipped: the install scenario's OS image needs %s (.ci/run installs grub-pc-bin, zstd, xz-utils)", strings.Join(missing, ", "))
	}
	dir := t.TempDir()
	image := filepath.Join(dir, "os.raw")
	snippet := filepath.Join(s.installed, "usr/lib/bootupd/grub2-static/configs.d/05_ignition.cfg")
	run(t, "", nil, "./mkosimage.sh", filepath.Join(dir, "osimage"), s.kernel, s.initrd, s.rootImg, snippet, image)
	imageParts := partitions(t, image)
	bootPart, rootPart := imageParts[2], imageParts[3]
	imageEntry := openExt4(t, image, bootPart.start).mustCat("/loader/entries/flintos-6.1.conf")
	run(t, "", nil, "xz", "-0", "-T2", "-k", image)
	xzImage, err := os.ReadFile(image + ".xz")
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(image)
	disk := filepath.Join(dir, "disk.img")
	run(t, "", nil, "truncate", "-s", fmt.Sprint(fi.Size()), disk)

	cs := serve(t, map[string]string{"/os.raw.xz": string(xzImage), "/config.ign": installConfig})
	live := s.boot(t, dir, vm{Name: "live", Disks: []string{disk}, Net: true, Timeout: installBootTimeout,
		Args: []string{"rd.systemd.unit=flint-installer-post.target", "ip=dhcp",
			"coreos.inst.install_dev=/dev/vda", "coreos.inst.image_url=" + cs.url("/os.raw.xz"),
			"coreos.inst.ignition_url=" + cs.url("/config.ign"), "coreos.inst.insecure"}})
	live.mustHave(t, "flint-installer-generator: this boot installs", "flint install /dev/vda", "install complete",
		"systemd-shutdown[1]: Rebooting.")
	if live.has("emergency.target") {
		t.Errorf("the live boot went to the emergency target")
	}
	if !cs.served("/os.raw.xz") || !cs.served("/config.ign") {
		t.Errorf("the live boot did not fetch both the image and the config")
	}
	if t.Failed() {
		return
	}
	// The disk is the image outside the boot filesystem: the partition
	// table and the root, byte for byte.
	if got := partitions(t, disk); fmt.Sprint(got) != fmt.Sprint(imageParts) {
		t.Errorf("the installed table %v, want the image's %v", got, imageParts)
	}
	if sectorsHash(t, disk, 0, bootPart.start) != sectorsHash(t, image, 0, bootPart.start) {
		t.Errorf("the disk's first %d sectors (MBR, GPT, GRUB's core) differ from the image's", bootPart.start)
	}
	if sectorsHash(t, disk, rootPart.start, rootPart.sizeSectors) != sectorsHash(t, image, rootPart.start, rootPart.sizeSectors) {
		t.Errorf("the root partition differs from the image's")
	}
	boot := openExt4(t, disk, bootPart.start)
	if got := boot.mustCat("/ignition/config.ign"); got != installConfig {
		t.Errorf("ignition/config.ign on the boot filesystem is not the served config")
	}
	if _, _, mode := boot.owner("/ignition/config.ign"); mode != "0600" {
		t.Errorf("ignition/config.ign has mode %s, want 0600", mode)
	}
	const netArgs = "rd.neednet=1 ip=dhcp"
	if got := boot.mustCat("/ignition.firstboot"); !strings.Contains(got, `set ignition_network_kcmdline="`+netArgs+`"`) {
		t.Errorf("ignition.firstboot = %q, want the live boot's network arguments", got)
	}
	if got := boot.mustCat("/loader/entries/flintos-6.1.conf"); got != imageEntry {
		t.Errorf("the BLS entry changed with no option asking for it:\n%s", got)
	}
	if t.Failed() {
		return
	}

	t.Run("first-boot", func(t *testing.T) {
		c := s.boot(t, dir, vm{Name: "first", Disks: []string{disk}, Net: true, FromDisk: true, Timeout: installBootTimeout})
		c.mustHave(t, "FLINTOS-GRUB: [ignition.firstboot "+netArgs+"]",
			"the user config is ignition/config.ign on the filesystem labelled boot",
			"flint-firstboot-done: removed ignition/config.ign", "flint-firstboot-done: removed ignition.firstboot",
			"FLINTVM-ROOT: init reached")
		if t.Failed() {
			return
		}
		// The config and the stamp go only once the last stage before
		// switch-root (files) has finished.
		files, okFiles := consoleStamp(c.text, "files: stage finished")
		removed, okRemoved := consoleStamp(c.text, "flint-firstboot-done: removed ignition/config.ign")
		if !okFiles || !okRemoved || removed < files {
			t.Errorf("the config was removed at %.2f s, the files stage finished at %.2f s (found: %v, %v)", removed, files, okRemoved, okFiles)
		}
		data, ok := partitions(t, disk)[4]
		if !ok || data.name != "data" || data.sizeSectors != 32*2048 {
			t.Fatalf("partition 4 = %+v, want a 32 MiB partition labelled data", data)
		}
		if got := openExt4(t, disk, data.start).mustCat("/hello.txt"); got != "installed by flint\n" {
			t.Errorf("/var/data/hello.txt = %q", got)
		}
		root := openExt4(t, disk, rootPart.start)
		if got := root.mustCat("/etc/motd"); got != "bare metal\n" {
			t.Errorf("/etc/motd = %q", got)
		}
		if passwd := root.mustCat("/etc/passwd"); !strings.Contains(passwd, "\ncore:x:") {
			t.Errorf("/etc/passwd has no user core:\n%s", passwd)
		}
		if keys := root.mustCat("/home/core/.ssh/authorized_keys.d/ignition"); keys != sshKey+"\n" {
			t.Errorf("core's authorized_keys.d/ignition = %q", keys)
		}
		if preset := root.mustCat("/etc/systemd/system-preset/20-ignition.preset"); !strings.Contains(preset, "enable hello.service") {
			t.Errorf("the preset does not enable hello.service: %q", preset)
		}
		for _, gone := range []string{"/ignition/config.ign", "/ignition.firstboot"} {
			if _, err := boot.stat(gone); err == nil {
				t.Errorf("%s is still on the boot filesystem after a successful first boot", gone)
			}
		}
	})
	if t.Failed() {
		return
	}

	t.Run("second-boot", func(t *testing.T) {
		parts := partitions(t, disk)
		root := openExt4(t, disk, rootPart.start)
		tableBefore, dataBefore := sectorsHash(t, disk, 0, 2048), sectorsHash(t, disk, parts[4].start, parts[4].sizeSectors)
		etcBefore, bootBefore := root.ls("/etc"), boot.ls("/")
		c := s.boot(t, dir, vm{Name: "second", Disks: []string{disk}, FromDisk: true, Timeout: installBootTimeout})
		c.mustHave(t, "FLINTOS-GRUB: []", "flint-generator: not the first boot", "FLINTVM-ROOT: init reached")
		if lines := c.journal(); len(lines) != 0 {
			t.Errorf("flint logged on the second boot:\n%s", strings.Join(lines, "\n"))
		}
		if sectorsHash(t, disk, 0, 2048) != tableBefore {
			t.Errorf("the partition table changed on the second boot")
		}
		if sectorsHash(t, disk, parts[4].start, parts[4].sizeSectors) != dataBefore {
			t.Errorf("the data partition changed on the second boot")
		}
		if after := root.ls("/etc"); strings.Join(after, " ") != strings.Join(etcBefore, " ") {
			t.Errorf("/etc changed: before %v, after %v", etcBefore, after)
		}
		if after := boot.ls("/"); strings.Join(after, " ") != strings.Join(bootBefore, " ") {
			t.Errorf("the boot filesystem changed: before %v, after %v", bootBefore, after)
		}
	})
}

// consoleStamp returns the kernel timestamp of the first console line
// containing sub.
func consoleStamp(text, sub string) (float64, bool) {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return stamp([]string{strings.TrimSpace(l)}, sub)
		}
	}
	return 0, false
}
