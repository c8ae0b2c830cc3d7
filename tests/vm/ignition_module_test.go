package vm

import (
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// demoPort is where examples/demo.ign fetches its web page from (the host's
// 127.0.0.1, 10.0.2.2 in the guest), as `make demo` serves it.
const demoPort = "127.0.0.1:8765"

// ignitionModule assembles the distro-style module of testdata/30ignition
// (Ignition's unit names and command lines, /usr/bin/ignition a symlink to
// flint) with the flint binary beside its module-setup.sh, and builds an
// initramfs from it alone: flint's own module is not in the image.
func (s *suite) ignitionModule(t *testing.T, dir string) string {
	t.Helper()
	mod := filepath.Join(dir, "30ignition")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "30ignition", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/30ignition (%v)", err)
	}
	// The binary make install wrote, as a distro keeping its own module
	// would take it from flint's package.
	bin := filepath.Join(s.installed, "usr", "bin", "flint")
	run(t, "", nil, "cp", append(append([]string{"-p"}, files...), bin, mod)...)
	probe, err := filepath.Abs(filepath.Join("testdata", "99ignitionvm"))
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "initrd-ignition.img")
	run(t, "", []string{"FLINT_MKINITRD_MODULE=ignition"}, "./mkinitrd.sh", bin, s.kver, filepath.Join(dir, "work"), img, mod, probe)
	listing := run(t, "", nil, "lsinitrd", img)
	for _, want := range []string{"usr/bin/ignition -> flint", "ignition-files.service"} {
		if !strings.Contains(listing, want) {
			t.Fatalf("the initramfs lacks %s:\n%s", want, listing)
		}
	}
	if strings.Contains(listing, "flint-files.service") || strings.Contains(listing, "flint-generator") {
		t.Fatalf("flint's own module is in the distro-style initramfs:\n%s", listing)
	}
	return img
}

// testIgnitionModule boots examples/demo.ign, as `make demo` does, with an
// initramfs whose provisioning is a distro's module kept under Ignition's
// names: units that run `/usr/bin/ignition --root=/sysroot
// --platform=${PLATFORM_ID} --stage=S`, written from Ignition's documented
// command lines, and /usr/bin/ignition a symlink to flint. The network
// comes from ip=dhcp, as a distro's glue would bring it up. What lands on
// the disks is what `make demo` reports.
func (s *suite) testIgnitionModule(t *testing.T) {
	dir := t.TempDir()
	img := s.ignitionModule(t, dir)

	l, err := net.Listen("tcp", demoPort)
	if err != nil {
		t.Skipf("cannot serve the demo's page on %s (make demo running?): %v", demoPort, err)
	}
	var asked atomic.Int32
	www := http.FileServer(http.Dir(filepath.Join(repoRoot(t), "examples", "demo-www")))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		www.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	disk := s.newDisk(t, dir, "root.img", 64, true)
	data := filepath.Join(dir, "data.img")
	run(t, "", nil, "truncate", "-s", "256M", data)
	distro := *s
	distro.initrd = img
	c := distro.boot(t, dir, vm{Name: "ignition-module", FwCfg: filepath.Join(repoRoot(t), "examples", "demo.ign"),
		Disks: []string{disk, data}, Net: true,
		Args: []string{"ignition.firstboot", "ignition.platform.id=qemu", "rd.neednet=1", "ip=dhcp"}})
	c.mustHave(t, "FLINTVM-ROOT: init reached")
	// Not fetch: fetch-offline cached the config (fw_cfg needs no
	// network; only the page does, in the files stage), so
	// ignition-fetch.service's ConditionPathExists=!/run/ignition.json
	// skips it, as Ignition's would.
	for _, stage := range []string{"fetch-offline", "kargs", "disks", "mount", "files"} {
		if !c.has("Ignition (" + stage + ")") {
			t.Errorf("the console does not show the unit Ignition (%s)", stage)
		}
	}
	// Under Ignition's name the stages log as ignition: a distro's
	// journalctl -t ignition finds them; nothing is logged as flint.
	c.mustHave(t, "IGNITIONVM-JOURNAL: ignition=1 flint=0")
	if t.Failed() {
		return
	}

	// What `make demo` reports (tests/vm/demo.sh, step 5).
	parts := partitions(t, data)
	www1, ok := parts[1]
	if !ok || www1.name != "www" {
		t.Fatalf("data disk partition 1 = %+v, want one labelled www; table %+v", www1, parts)
	}
	page := openExt4(t, data, www1.start).mustCat("/index.html")
	sum := sha512.Sum512([]byte(page))
	cfg, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "demo.ign"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "sha512-"+hex.EncodeToString(sum[:])) {
		t.Errorf("/srv/www/index.html (%d bytes) does not match the config's sha512", len(page))
	}
	if asked.Load() == 0 {
		t.Errorf("the guest never asked for the demo's page")
	}
	root := openExt4(t, disk, parts0(t, disk).start)
	if got := root.mustCat("/etc/hostname"); got != "web-01\n" {
		t.Errorf("/etc/hostname = %q, want web-01", got)
	}
	if passwd := root.mustCat("/etc/passwd"); !strings.Contains(passwd, "\ncore:") && !strings.HasPrefix(passwd, "core:") {
		t.Errorf("/etc/passwd has no user core:\n%s", passwd)
	}
	if group := root.mustCat("/etc/group"); !strings.Contains(group, "wheel:x:10:core") {
		t.Errorf("core is not in wheel:\n%s", group)
	}
	if key := root.mustCat("/home/core/.ssh/authorized_keys.d/ignition"); !strings.HasPrefix(key, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZsaW50LWRlbW8ta2V5") {
		t.Errorf("core's authorized_keys.d/ignition = %q, want the demo's key", key)
	}
	for _, unit := range []string{"srv-www.mount", "webserver.service"} {
		if _, err := root.stat("/etc/systemd/system/" + unit); err != nil {
			t.Errorf("%s not written: %v", unit, err)
		}
	}
	preset := root.mustCat("/etc/systemd/system-preset/20-ignition.preset")
	if !strings.Contains(preset, "enable srv-www.mount") || !strings.Contains(preset, "enable webserver.service") {
		t.Errorf("the preset = %q, want both units enabled", preset)
	}
	if _, err := root.stat("/etc/.ignition-result.json"); errors.Is(err, os.ErrNotExist) {
		t.Errorf("no /etc/.ignition-result.json")
	}
}

// parts0 is the root disk's first partition (the root filesystem).
func parts0(t *testing.T, disk string) partition {
	t.Helper()
	p, ok := partitions(t, disk)[1]
	if !ok {
		t.Fatalf("%s has no partition 1", disk)
	}
	return p
}
