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
	requireOSImageTools(t)
	dir := t.TempDir()
	img := s.buildOSImage(t, dir)
	disk := img.blankDisk(t, dir)

	cs := serve(t, map[string]string{"/os.raw.xz": string(img.xz), "/config.ign": installConfig})
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
	const netArgs = "rd.neednet=1 ip=dhcp"
	img.checkInstalled(t, disk, installConfig, netArgs)
	if t.Failed() {
		return
	}
	t.Run("first-boot", func(t *testing.T) { s.checkFirstBoot(t, dir, img, disk, netArgs) })
	if t.Failed() {
		return
	}
	t.Run("second-boot", func(t *testing.T) { s.checkSecondBoot(t, dir, img, disk) })
}

// requireOSImageTools skips the test when the OS image cannot be built.
func requireOSImageTools(t *testing.T) {
	t.Helper()
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
}

// osImage is the OS image the install scenarios write (mkosimage.sh),
// raw and xz-compressed, with what the checks compare the disk to.
type osImage struct {
	path       string
	xz         []byte
	parts      map[int]partition
	boot, root partition
	// entry is the image's BLS entry, which no option changes.
	entry string
}

// buildOSImage builds the OS image from the suite's kernel, initramfs and
// root, and compresses it.
func (s *suite) buildOSImage(t *testing.T, dir string) osImage {
	t.Helper()
	img := osImage{path: filepath.Join(dir, "os.raw")}
	// The GRUB snippet as make install placed it.
	snippet := filepath.Join(s.installed, "usr/lib/bootupd/grub2-static/configs.d/05_ignition.cfg")
	run(t, "", nil, "./mkosimage.sh", filepath.Join(dir, "osimage"), s.kernel, s.initrd, s.rootImg, snippet, img.path)
	img.parts = partitions(t, img.path)
	img.boot, img.root = img.parts[2], img.parts[3]
	img.entry = openExt4(t, img.path, img.boot.start).mustCat("/loader/entries/flintos-6.1.conf")
	run(t, "", nil, "xz", "-0", "-T2", "-k", img.path)
	var err error
	if img.xz, err = os.ReadFile(img.path + ".xz"); err != nil {
		t.Fatal(err)
	}
	return img
}

// blankDisk is an empty disk of the image's size.
func (img osImage) blankDisk(t *testing.T, dir string) string {
	t.Helper()
	fi, err := os.Stat(img.path)
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(dir, "disk.img")
	run(t, "", nil, "truncate", "-s", fmt.Sprint(fi.Size()), disk)
	return disk
}

// checkInstalled checks a disk the live installer wrote with config (the
// bytes of installConfig as the installer got them) and the live boot's
// network arguments netArgs: the image outside the boot filesystem, byte
// for byte, the config and the first-boot stamp on it.
func (img osImage) checkInstalled(t *testing.T, disk, config, netArgs string) {
	t.Helper()
	if got := partitions(t, disk); fmt.Sprint(got) != fmt.Sprint(img.parts) {
		t.Errorf("the installed table %v, want the image's %v", got, img.parts)
	}
	if sectorsHash(t, disk, 0, img.boot.start) != sectorsHash(t, img.path, 0, img.boot.start) {
		t.Errorf("the disk's first %d sectors (MBR, GPT, GRUB's core) differ from the image's", img.boot.start)
	}
	if sectorsHash(t, disk, img.root.start, img.root.sizeSectors) != sectorsHash(t, img.path, img.root.start, img.root.sizeSectors) {
		t.Errorf("the root partition differs from the image's")
	}
	boot := openExt4(t, disk, img.boot.start)
	if got := boot.mustCat("/ignition/config.ign"); got != config {
		t.Errorf("ignition/config.ign on the boot filesystem is not the given config:\n%q\nwant\n%q", got, config)
	}
	if _, _, mode := boot.owner("/ignition/config.ign"); mode != "0600" {
		t.Errorf("ignition/config.ign has mode %s, want 0600", mode)
	}
	if got := boot.mustCat("/ignition.firstboot"); !strings.Contains(got, `set ignition_network_kcmdline="`+netArgs+`"`) {
		t.Errorf("ignition.firstboot = %q, want the live boot's network arguments", got)
	}
	if got := boot.mustCat("/loader/entries/flintos-6.1.conf"); got != img.entry {
		t.Errorf("the BLS entry changed with no option asking for it:\n%s", got)
	}
}

// checkFirstBoot boots an installed disk: GRUB finds the stamp and adds
// ignition.firstboot with the network arguments the live boot had; flint
// takes the config from the boot filesystem, provisions, and removes the
// config and the stamp. It returns the boot's console.
func (s *suite) checkFirstBoot(t *testing.T, dir string, img osImage, disk, netArgs string) console {
	t.Helper()
	c := s.boot(t, dir, vm{Name: "first", Disks: []string{disk}, Net: true, FromDisk: true, Timeout: installBootTimeout})
	c.mustHave(t, "FLINTOS-GRUB: [ignition.firstboot "+netArgs+"]",
		"the user config is ignition/config.ign on the filesystem labelled boot",
		"flint-firstboot-done: removed ignition/config.ign", "flint-firstboot-done: removed ignition.firstboot",
		"FLINTVM-ROOT: init reached")
	if t.Failed() {
		return c
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
	root := openExt4(t, disk, img.root.start)
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
	boot := openExt4(t, disk, img.boot.start)
	for _, gone := range []string{"/ignition/config.ign", "/ignition.firstboot"} {
		if _, err := boot.stat(gone); err == nil {
			t.Errorf("%s is still on the boot filesystem after a successful first boot", gone)
		}
	}
	return c
}

// checkSecondBoot boots the provisioned disk again: GRUB adds nothing,
// nothing of flint runs, nothing changes.
func (s *suite) checkSecondBoot(t *testing.T, dir string, img osImage, disk string) {
	t.Helper()
	parts := partitions(t, disk)
	root, boot := openExt4(t, disk, img.root.start), openExt4(t, disk, img.boot.start)
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
