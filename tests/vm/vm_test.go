package vm

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestVM boots flint in QEMU, one subtest per scenario, at most maxVMs at
// a time. The initramfs, flint and the root filesystem are built once.
func TestVM(t *testing.T) {
	s := newSuite(t, t.TempDir())
	t.Logf("flint's part of the initramfs: %s", s.flintShare(t))

	t.Run("qemu-fwcfg", s.testQEMU)
	t.Run("metal-config-url", s.testMetalURL)
	t.Run("wrong-hash", s.testWrongHash)
	t.Run("report-failure", s.testReportFailure)
	t.Run("luks-raid", s.testLuksRaid)
	t.Run("kargs-reboot", s.testKargs)
	t.Run("bare-metal-install", s.testInstall)
	t.Run("ignition-module", s.testIgnitionModule)
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// qemuConfig is scenario 1's config: a data partition after the root
// with an ext4 filesystem and an ESP with a FAT one, both mounted for the
// files stage, a file on each and one in /etc, a user with an SSH key,
// and an enabled unit.
const qemuConfig = `{
  "ignition": {"version": "3.4.0"},
  "storage": {
    "disks": [{"device": "/dev/vda", "partitions": [
      {"number": 2, "label": "data", "sizeMiB": 48},
      {"number": 3, "label": "esp", "sizeMiB": 16, "typeGuid": "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"}]}],
    "filesystems": [
      {"device": "/dev/disk/by-partlabel/data", "format": "ext4", "label": "DATA", "path": "/var/data", "wipeFilesystem": true},
      {"device": "/dev/disk/by-partlabel/esp", "format": "vfat", "label": "ESP", "path": "/boot/efi", "wipeFilesystem": true}],
    "directories": [{"path": "/var/data/www", "mode": 493}],
    "files": [
      {"path": "/var/data/www/index.html", "mode": 420, "contents": {"source": "data:,hello%20from%20flint%0A"}},
      {"path": "/etc/motd", "mode": 420, "contents": {"source": "data:;base64,cHJvdmlzaW9uZWQgYnkgZmxpbnQK"}},
      {"path": "/boot/efi/flint/hello.txt", "contents": {"source": "data:,on%20the%20ESP%0A"}}
    ]
  },
  "passwd": {"users": [{"name": "core", "groups": ["wheel"], "sshAuthorizedKeys": ["` + sshKey + `"]}]},
  "systemd": {"units": [{"name": "hello.service", "enabled": true,
    "contents": "[Unit]\nDescription=hello\n\n[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n"}]}
}`

// testQEMU is scenario 1 (the qemu platform: the config through fw_cfg)
// and, on the same disk, scenario 4 (a boot without ignition.firstboot).
func (s *suite) testQEMU(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := s.newDisk(t, dir, "disk.img", 128, true)
	cfg := writeFile(t, dir, "config.ign", qemuConfig)
	c := s.boot(t, dir, vm{Name: "first", FwCfg: cfg, Disks: []string{disk},
		Args: []string{"ignition.firstboot", "ignition.platform.id=qemu", "flintvm.journal", "flintvm.alias", "flint.console=1"}})
	c.mustHave(t, "FLINTVM-ROOT: init reached")
	// A unit ordered After=ignition-files.service ran after flint's files
	// stage, which a drop-in under Ignition's name reached.
	c.mustHave(t, "FLINTVM-ALIAS: flint-files.service active FLINTVM_DROPIN=1")
	if t.Failed() {
		return
	}
	journal := c.journal()
	if end, ok := stamp(journal, "files: stage finished"); ok {
		t.Logf("FIGURE kernel start to the end of the files stage: %.2f s (journal monotonic stamp)", end)
	} else {
		t.Errorf("no 'files: stage finished' line in flint's journal:\n%s", strings.Join(journal, "\n"))
	}

	parts := partitions(t, disk)
	data, ok := parts[2]
	if !ok || data.name != "data" || data.sizeSectors != 48*2048 {
		t.Fatalf("partition 2 = %+v, want a 48 MiB partition labelled data; table: %+v", data, parts)
	}
	dfs := openExt4(t, disk, data.start)
	if got := dfs.mustCat("/www/index.html"); got != "hello from flint\n" {
		t.Errorf("/var/data/www/index.html = %q, want %q", got, "hello from flint\n")
	}
	if esp, ok := parts[3]; !ok || esp.name != "esp" {
		t.Errorf("partition 3 = %+v, want the ESP", esp)
	} else if got := run(t, "", nil, "mtype", "-i", fmt.Sprintf("%s@@%d", disk, esp.start*512), "::/flint/hello.txt"); got != "on the ESP\n" {
		t.Errorf("/boot/efi/flint/hello.txt (FAT, read with mtools) = %q", got)
	}
	root := openExt4(t, disk, parts[1].start)
	if got := root.mustCat("/etc/motd"); got != "provisioned by flint\n" {
		t.Errorf("/etc/motd = %q", got)
	}
	passwd := root.mustCat("/etc/passwd")
	var coreUID string
	for _, l := range strings.Split(passwd, "\n") {
		if f := strings.Split(l, ":"); len(f) == 7 && f[0] == "core" {
			coreUID = f[2]
		}
	}
	if coreUID == "" {
		t.Fatalf("/etc/passwd has no user core:\n%s", passwd)
	}
	if group := root.mustCat("/etc/group"); !strings.Contains(group, "wheel:x:10:core") {
		t.Errorf("core is not in wheel:\n%s", group)
	}
	keys := root.mustCat("/home/core/.ssh/authorized_keys.d/ignition")
	if keys != sshKey+"\n" {
		t.Errorf("core's authorized_keys.d/ignition = %q, want the key", keys)
	}
	if uid, _, _ := root.owner("/home/core/.ssh/authorized_keys.d/ignition"); fmt.Sprint(uid) != coreUID {
		t.Errorf("the key file belongs to uid %d, want core's %s", uid, coreUID)
	}
	if unit := root.mustCat("/etc/systemd/system/hello.service"); !strings.Contains(unit, "ExecStart=/bin/true") {
		t.Errorf("hello.service = %q", unit)
	}
	if preset := root.mustCat("/etc/systemd/system-preset/20-ignition.preset"); !strings.Contains(preset, "enable hello.service") {
		t.Errorf("the preset does not enable hello.service: %q", preset)
	}
	if _, err := root.stat("/var/data"); err != nil {
		t.Errorf("the mountpoint /var/data was not created: %v", err)
	}

	t.Run("second-boot", func(t *testing.T) { s.testSecondBoot(t, dir, disk) })
}

// testSecondBoot is scenario 4: the same disk booted again without
// ignition.firstboot, with a config in fw_cfg that would write a file:
// nothing of flint runs, the partition table and the data partition are
// bit for bit the same, and the root filesystem (mounted read-only, but
// checked by systemd-fsck-root, which may update its superblock) holds
// the same files in /etc and not the new one.
func (s *suite) testSecondBoot(t *testing.T, dir, disk string) {
	parts := partitions(t, disk)
	root := openExt4(t, disk, parts[1].start)
	tableBefore, dataBefore := sectorsHash(t, disk, 0, 2048), sectorsHash(t, disk, parts[2].start, parts[2].sizeSectors)
	etcBefore := root.ls("/etc")
	cfg := writeFile(t, dir, "second.ign", `{"ignition": {"version": "3.4.0"},
	  "storage": {"files": [{"path": "/etc/second-boot", "contents": {"source": "data:,no"}}]}}`)
	c := s.boot(t, dir, vm{Name: "second", FwCfg: cfg, Disks: []string{disk},
		Args: []string{"ignition.platform.id=qemu", "flintvm.journal", "flint.console=1"}})
	c.mustHave(t, "FLINTVM-ROOT: init reached", "flint-generator: not the first boot")
	if lines := c.journal(); len(lines) != 0 {
		t.Errorf("flint logged on a boot without ignition.firstboot:\n%s", strings.Join(lines, "\n"))
	}
	if c.has("flint-fetch-offline") || c.has("flint: fetch") {
		t.Errorf("a flint stage unit ran on the second boot")
	}
	if sectorsHash(t, disk, 0, 2048) != tableBefore {
		t.Errorf("the partition table changed on a boot without ignition.firstboot")
	}
	if sectorsHash(t, disk, parts[2].start, parts[2].sizeSectors) != dataBefore {
		t.Errorf("the data partition changed on a boot without ignition.firstboot")
	}
	if after := root.ls("/etc"); strings.Join(after, " ") != strings.Join(etcBefore, " ") {
		t.Errorf("/etc changed: before %v, after %v", etcBefore, after)
	}
}

// sectorsHash hashes count sectors of a disk image from start.
func sectorsHash(t *testing.T, disk string, start, count int64) string {
	t.Helper()
	f, err := os.Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, start*512, count*512)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// configServer serves files on 127.0.0.1 (the guest reaches it as
// 10.0.2.2 through QEMU's user network) and records the paths asked for.
type configServer struct {
	port  int
	mu    sync.Mutex
	asked []string
	// posts are the bodies POSTed to /report: the first-boot reports.
	posts [][]byte
}

func serve(t *testing.T, files map[string]string) *configServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &configServer{port: l.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.asked = append(cs.asked, r.URL.Path)
		cs.mu.Unlock()
		if r.Method == http.MethodPost && r.URL.Path == "/report" {
			b, _ := io.ReadAll(r.Body)
			cs.mu.Lock()
			cs.posts = append(cs.posts, b)
			cs.mu.Unlock()
			return
		}
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return cs
}

func (cs *configServer) url(path string) string {
	return fmt.Sprintf("http://10.0.2.2:%d%s", cs.port, path)
}

// reports returns the first-boot reports the guest POSTed, decoded.
func (cs *configServer) reports(t *testing.T) []map[string]any {
	t.Helper()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []map[string]any
	for _, b := range cs.posts {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("a report is not JSON: %v: %q", err, b)
			continue
		}
		out = append(out, m)
	}
	return out
}

func (cs *configServer) served(path string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, p := range cs.asked {
		if p == path {
			return true
		}
	}
	return false
}

func sha512Hex(s string) string {
	h := sha512.Sum512([]byte(s))
	return hex.EncodeToString(h[:])
}

// testMetalURL is scenario 2, PXE-to-live style: the metal platform, the
// config named by ignition.config.url on the kernel command line and
// served by the test. The config merges a second remote config (checked
// by hash) and fetches a file (checked by hash); fetch-offline finds it
// needs the network, flint-neednet brings DHCP up, fetch gets it.
func (s *suite) testMetalURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const appConf = "listen = 0.0.0.0:8080\nworkers = 4\n"
	files := map[string]string{"/files/app.conf": appConf}
	cs := serve(t, files)
	extra := `{"ignition": {"version": "3.2.0"},
	  "storage": {"files": [{"path": "/etc/flint-merged", "mode": 420, "contents": {"source": "data:,merged%0A"}}]}}`
	files["/configs/extra.ign"] = extra
	files["/configs/main.ign"] = `{
	  "ignition": {"version": "3.4.0", "config": {"merge": [
	    {"source": "` + cs.url("/configs/extra.ign") + `", "verification": {"hash": "sha512-` + sha512Hex(extra) + `"}}]}},
	  "storage": {"files": [{"path": "/etc/app/app.conf", "mode": 420,
	    "contents": {"source": "` + cs.url("/files/app.conf") + `", "verification": {"hash": "sha512-` + sha512Hex(appConf) + `"}}}]}
	}`
	// DigitalOcean's metadata for the guest's NIC (QEMU's default MAC
	// address): flintvm.netunits has `flint agent network-units` write its
	// .network once provisioning is done, and networkd must take the NIC
	// over from the DHCP unit with the static address.
	files["/metadata/v1.json"] = `{"hostname":"vm","dns":{"nameservers":["10.0.2.3"]},"interfaces":{"public":[{"type":"public",
	  "mac":"52:54:00:12:34:56","ipv4":{"ip_address":"10.0.2.77","netmask":"255.255.255.0","gateway":"10.0.2.2"}}]}}`
	disk := s.newDisk(t, dir, "disk.img", 64, true)
	c := s.boot(t, dir, vm{Name: "first", Disks: []string{disk}, Net: true,
		Args: []string{"ignition.firstboot", "ignition.platform.id=metal", "ignition.config.url=" + cs.url("/configs/main.ign"),
			"flint.report.url=" + cs.url("/report"), "flintvm.journal", "flint.console=1", "flintvm.netunits=" + cs.url("")}})
	c.mustHave(t, "FLINTVM-ROOT: init reached", "flint-neednet: the config needs the network")
	c.mustHave(t, "FLINTVM-NET: file 10-52:54:00:12:34:56.network",
		"FLINTVM-NET: link: NETWORK_FILE=/run/systemd/network/10-52:54:00:12:34:56.network", "FLINTVM-NET: link: ADMIN_STATE=configured",
		"FLINTVM-NET: address 10.0.2.77 on ", "FLINTVM-NET: done")
	// One report, of a success, with every stage up to files.
	if r := cs.reports(t); len(r) != 1 || r[0]["outcome"] != "success" || r[0]["schema"] != float64(1) || r[0]["platform"] != "metal" {
		t.Errorf("reports = %v, want one success report of schema 1 from metal", r)
	} else {
		// kargs runs only when the config has kernel arguments.
		var names []string
		st, _ := r[0]["stages"].([]any)
		for _, x := range st {
			if m, ok := x.(map[string]any); ok && m["outcome"] == "success" {
				names = append(names, fmt.Sprint(m["name"]))
			}
		}
		if got := strings.Join(names, " "); got != "fetch-offline fetch disks mount files" {
			t.Errorf("report stages that succeeded = %q, want fetch-offline fetch disks mount files", got)
		}
	}
	for _, p := range []string{"/configs/main.ign", "/configs/extra.ign", "/files/app.conf"} {
		if !cs.served(p) {
			t.Errorf("the guest never asked for %s", p)
		}
	}
	if end, ok := stamp(c.journal(), "files: stage finished"); ok {
		t.Logf("kernel start to the end of the files stage: %.2f s", end)
	}
	root := openExt4(t, disk, partitions(t, disk)[1].start)
	if got := root.mustCat("/etc/app/app.conf"); got != appConf {
		t.Errorf("/etc/app/app.conf = %q, want %q", got, appConf)
	}
	if got := root.mustCat("/etc/flint-merged"); got != "merged\n" {
		t.Errorf("/etc/flint-merged (from the merged config) = %q", got)
	}
}

// testWrongHash is scenario 3: a file whose contents do not match its
// hash. The files stage fails, the boot stops in the emergency target
// (rd.emergency=poweroff ends the VM there), the console summary names
// the stage, the file and both hashes, and the root filesystem holds no
// trace of the file (nor of a temporary one). The file goes to an
// existing directory: a missing parent is created before the contents
// are fetched, as Ignition does.
func (s *suite) testWrongHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := "the real content\n"
	wrong := sha512Hex("what the config expected\n")
	cfg := writeFile(t, dir, "config.ign", `{"ignition": {"version": "3.4.0"},
	  "storage": {"files": [{"path": "/etc/secret.conf", "mode": 384,
	    "contents": {"source": "data:,the%20real%20content%0A", "verification": {"hash": "sha512-`+wrong+`"}}}]}}`)
	disk := s.newDisk(t, dir, "disk.img", 64, true)
	// The filesystem labelled boot, where the first-boot stamp is kept.
	bootPart := addExt4Partition(t, dir, disk, 2, 16, "boot", "boot", map[string]string{"loader/entries/flintvm.conf": bootEntry})
	root := openExt4(t, disk, rootStartSector)
	etcBefore := root.ls("/etc")
	c := s.boot(t, dir, vm{Name: "first", FwCfg: cfg, Disks: []string{disk},
		Args: []string{"ignition.firstboot", "ignition.platform.id=qemu"}})
	c.mustHave(t,
		"flint: provisioning failed in the files stage (flint-files.service)",
		"/etc/secret.conf",
		"sha512-"+wrong,
		"sha512-"+sha512Hex(content),
		"journalctl -t flint",
		"Reached target emergency.target")
	if c.has("FLINTVM-ROOT: init reached") {
		t.Errorf("the boot went on to the root filesystem after a failed stage")
	}
	if c.has("the real content") {
		t.Errorf("the file's content reached the console")
	}
	if after := root.ls("/etc"); strings.Join(after, " ") != strings.Join(etcBefore, " ") {
		t.Errorf("/etc changed: before %v, after %v", etcBefore, after)
	}
	boot := openExt4(t, disk, bootPart.start)
	if stamp, err := boot.cat("/flint.firstboot-stamp"); err != nil || !strings.Contains(stamp, `"stage":"files"`) {
		t.Fatalf("the first-boot stamp on the filesystem labelled boot = %q, %v; want stage files", stamp, err)
	}

	// The first boot died half-way: the next stops at the stamp, before
	// any stage writes anything, naming the stage that did not finish...
	t.Run("stamp-stops-the-rerun", func(t *testing.T) {
		c := s.boot(t, dir, vm{Name: "rerun", FwCfg: cfg, Disks: []string{disk},
			Args: []string{"ignition.firstboot", "ignition.platform.id=qemu"}})
		// At its first stage that sees the filesystem labelled boot:
		// fetch-offline, or (the disk came up after it) kargs or the
		// disks stage, before it touches a disk; this config names no
		// disk for the disks stage to wait for, so on a loaded host the
		// disk can come up later still, and the mount stage stops the
		// boot before it mounts anything. Never the files stage.
		c.mustHave(t, "the previous first boot did not finish: it stopped in stage files", "flint.firstboot.retry=1")
		stopped := false
		for _, st := range []string{"fetch-offline", "fetch", "kargs", "disks", "mount"} {
			stopped = stopped || c.has("flint: provisioning failed in the "+st+" stage")
		}
		if !stopped {
			t.Errorf("the rerun did not stop at the stamp before the files stage")
		}
		if c.has("FLINTVM-ROOT: init reached") {
			t.Errorf("the rerun went on to the root filesystem over the stamp")
		}
		// ...and flint.firstboot.retry=1 goes on: with a config that
		// works now, the boot finishes and the stamp is gone.
		good := writeFile(t, dir, "good.ign", `{"ignition": {"version": "3.4.0"},
		  "storage": {"files": [{"path": "/etc/secret.conf", "mode": 384, "contents": {"source": "data:,the%20real%20content%0A"}}]}}`)
		c = s.boot(t, dir, vm{Name: "retry", FwCfg: good, Disks: []string{disk},
			Args: []string{"ignition.firstboot", "ignition.platform.id=qemu", "flint.console=1", "flint.firstboot.retry=1"}})
		c.mustHave(t, "FLINTVM-ROOT: init reached", "stopped in stage files before it finished: going on")
		if got := root.mustCat("/etc/secret.conf"); got != content {
			t.Errorf("/etc/secret.conf after the retried boot = %q", got)
		}
		if stamp, err := boot.cat("/flint.firstboot-stamp"); err == nil {
			t.Errorf("the stamp is still on the filesystem labelled boot after the retried boot: %q", stamp)
		}
	})
}

// testReportFailure: a config whose file the server does not have (404)
// fails the files stage; from the emergency target the first-boot report
// goes to the collector on flint.report.url, naming the stage and the
// file, without the config's password hash.
func (s *suite) testReportFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	cs := serve(t, files)
	files["/configs/main.ign"] = `{"ignition": {"version": "3.4.0"},
	  "passwd": {"users": [{"name": "core", "passwordHash": "$6$vmsalt$vmreporthashsecret"}]},
	  "storage": {"files": [{"path": "/etc/missing.conf", "contents": {"source": "` + cs.url("/files/missing.conf?token=vmtokensecret") + `"}}]}}`
	disk := s.newDisk(t, dir, "disk.img", 64, true)
	c := s.boot(t, dir, vm{Name: "first", Disks: []string{disk}, Net: true,
		Args: []string{"ignition.firstboot", "ignition.platform.id=metal", "ignition.config.url=" + cs.url("/configs/main.ign"),
			"flint.report.url=" + cs.url("/report")}})
	c.mustHave(t, "flint: provisioning failed in the files stage", "Reached target emergency.target")
	r := cs.reports(t)
	if len(r) != 1 {
		t.Fatalf("reports = %v, want one", r)
	}
	if r[0]["outcome"] != "failure" || r[0]["failedStage"] != "files" {
		t.Errorf("report = %v, want a failure in the files stage", r[0])
	}
	if e, _ := r[0]["error"].(string); !strings.Contains(e, "/etc/missing.conf") || strings.Contains(e, "vmtokensecret") {
		t.Errorf("report error = %q, want it to name /etc/missing.conf without the URL's query", e)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, b := range cs.posts {
		if strings.Contains(string(b), "vmreporthashsecret") || strings.Contains(string(b), "vmtokensecret") {
			t.Errorf("a report holds a secret: %s", b)
		}
	}
}

// luksRaidConfig mirrors both new disks, encrypts the mirror with a key
// file, and writes a file into the filesystem inside (scenario 5). The
// key derivation is made cheap: under software emulation cryptsetup's
// default benchmark-tuned KDF takes several seconds per open.
const luksRaidConfig = `{
  "ignition": {"version": "3.4.0"},
  "storage": {
    "disks": [
      {"device": "/dev/vdb", "wipeTable": true, "partitions": [{"number": 1, "label": "raid.a", "typeGuid": "A19D880F-05FC-4D3B-A006-743F0F84911E"}]},
      {"device": "/dev/vdc", "wipeTable": true, "partitions": [{"number": 1, "label": "raid.b", "typeGuid": "A19D880F-05FC-4D3B-A006-743F0F84911E"}]}
    ],
    "raid": [{"name": "data", "level": "raid1", "devices": ["/dev/disk/by-partlabel/raid.a", "/dev/disk/by-partlabel/raid.b"]}],
    "luks": [{"name": "secret", "device": "/dev/md/data", "wipeVolume": true,
              "keyFile": {"source": "data:,flint-vm-test-key"},
              "options": ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]}],
    "filesystems": [{"device": "/dev/mapper/secret", "format": "ext4", "label": "SECRET", "path": "/var/secret", "wipeFilesystem": true}],
    "files": [{"path": "/var/secret/hello.txt", "mode": 384, "contents": {"source": "data:,sealed%0A"}}]
  }
}`

// testLuksRaid is scenario 5: RAID1 across two disks with LUKS on top,
// checked on the host (both members carry an md superblock for a
// two-device mirror, the mirror starts with a LUKS2 header, the root got
// its crypttab and key file) and by a second boot that assembles the
// mirror, opens it with the crypttab and key file flint wrote, and reads
// the file back.
func (s *suite) testLuksRaid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := s.newDisk(t, dir, "disk.img", 64, true)
	a := s.newDisk(t, dir, "a.img", 64, false)
	b := s.newDisk(t, dir, "b.img", 64, false)
	cfg := writeFile(t, dir, "config.ign", luksRaidConfig)
	disks := []string{disk, a, b}
	c := s.boot(t, dir, vm{Name: "first", FwCfg: cfg, Disks: disks,
		Args: []string{"ignition.firstboot", "ignition.platform.id=qemu", "flintvm.journal", "flintvm.alias", "flint.console=1"}})
	c.mustHave(t, "FLINTVM-ROOT: init reached")
	// A unit ordered After=ignition-files.service ran after flint's files
	// stage, which a drop-in under Ignition's name reached.
	c.mustHave(t, "FLINTVM-ALIAS: flint-files.service active FLINTVM_DROPIN=1")
	if t.Failed() {
		return
	}
	for _, m := range []struct{ disk, label string }{{a, "raid.a"}, {b, "raid.b"}} {
		p, ok := partitions(t, m.disk)[1]
		if !ok || p.name != m.label {
			t.Fatalf("%s: partition 1 = %+v, want label %s", filepath.Base(m.disk), p, m.label)
		}
		report, data := memberData(t, dir, m.disk, p, 6)
		for _, want := range []string{"Raid Level : raid1", "Raid Devices : 2"} {
			if !strings.Contains(report, want) {
				t.Errorf("%s: mdadm --examine lacks %q:\n%s", m.label, want, report)
			}
		}
		if string(data) != "LUKS\xba\xbe" {
			t.Errorf("%s: the mirror does not start with a LUKS header: % x", m.label, data)
		}
	}
	root := openExt4(t, disk, rootStartSector)
	crypttab := root.mustCat("/etc/crypttab")
	if !strings.HasPrefix(crypttab, "secret ") || !strings.Contains(crypttab, "/etc/luks/secret") {
		t.Errorf("/etc/crypttab = %q, want the volume secret with its key file", crypttab)
	}
	if key := root.mustCat("/etc/luks/secret"); key != "flint-vm-test-key" {
		t.Errorf("/etc/luks/secret does not hold the key file's content")
	}
	if _, _, mode := root.owner("/etc/luks/secret"); !strings.HasSuffix(mode, "00") {
		t.Errorf("/etc/luks/secret has mode %s, readable by others", mode)
	}

	t.Run("second-boot", func(t *testing.T) {
		c := s.boot(t, dir, vm{Name: "second", Disks: disks,
			Args: []string{"ignition.platform.id=qemu", "flintvm.check=luks:secret:/hello.txt"}})
		c.mustHave(t, "FLINTVM-CHECK: content: sealed", "FLINTVM-CHECK: done", "FLINTVM-ROOT: init reached")
	})
}

// bootEntry is the Boot Loader Specification entry the kargs scenario's
// boot filesystem starts with.
const bootEntry = "title flintvm\nversion 6.1\nlinux /vmlinuz\noptions root=LABEL=flintroot console=ttyS0 quiet\n"

// testKargs: a config with kernelArguments on a machine whose boot
// filesystem (labelled boot) holds BLS entries. The first boot edits the
// entry and reboots from the kargs stage, before any disk or file is
// touched (QEMU's -no-reboot ends the VM there); the next boot, with the
// new arguments as the boot loader would pass them, finds nothing to
// change and provisions the rest.
func (s *suite) testKargs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := s.newDisk(t, dir, "disk.img", 64, true)
	bootPart := addExt4Partition(t, dir, disk, 2, 16, "boot", "boot", map[string]string{"loader/entries/flintvm.conf": bootEntry})
	cfg := writeFile(t, dir, "config.ign", `{"ignition": {"version": "3.4.0"},
	  "kernelArguments": {"shouldExist": ["flint.kargs=applied"], "shouldNotExist": ["quiet"]},
	  "storage": {"files": [{"path": "/etc/after-kargs", "contents": {"source": "data:,provisioned%0A"}}]}}`)
	args := []string{"ignition.firstboot", "ignition.platform.id=qemu", "flintvm.journal", "flint.console=1"}
	c := s.boot(t, dir, vm{Name: "first", FwCfg: cfg, Disks: []string{disk}, Args: args})
	if c.has("FLINTVM-ROOT: init reached") {
		t.Fatalf("the first boot went on after the kargs stage changed the entries")
	}
	c.mustHave(t, "kargs: reboot: [started] rebooting so that the new kernel arguments take effect")
	if c.has("disks: flint") || c.has("files: flint") {
		t.Errorf("a stage after kargs started before the reboot")
	}
	boot := openExt4(t, disk, bootPart.start)
	entry := boot.mustCat("/loader/entries/flintvm.conf")
	if !strings.Contains(entry, "options root=LABEL=flintroot console=ttyS0 flint.kargs=applied\n") {
		t.Errorf("the entry after the kargs stage:\n%s", entry)
	}
	root := openExt4(t, disk, rootStartSector)
	if _, err := root.stat("/etc/after-kargs"); err == nil {
		t.Errorf("/etc/after-kargs was written before the reboot")
	}
	if t.Failed() {
		return
	}

	t.Run("after-reboot", func(t *testing.T) {
		c := s.boot(t, dir, vm{Name: "second", FwCfg: cfg, Disks: []string{disk}, Args: append(args, "flint.kargs=applied")})
		c.mustHave(t, "FLINTVM-ROOT: init reached", "files: stage finished")
		if c.has("rebooting so that") {
			t.Errorf("the kargs stage rebooted again with the arguments already in place")
		}
		if got := boot.mustCat("/loader/entries/flintvm.conf"); got != entry {
			t.Errorf("the entry changed again:\n%s", got)
		}
		if got := root.mustCat("/etc/after-kargs"); got != "provisioned\n" {
			t.Errorf("/etc/after-kargs = %q", got)
		}
	})
}
