//go:build linux

package blackbox

// The install cases: `flint install` writes an OS image the test builds
// (GPT; an ext4 filesystem labelled boot holding two BLS entries; an ext4
// root holding random data), compressed or not, from a file or from a
// server on 127.0.0.1, onto a loop device that already holds a table with
// a data partition. Each case checks the disk afterwards: the image byte
// for byte outside the boot filesystem, the boot filesystem's edits, the
// saved partition's data, or (for a bad image) a disk left with no
// partition table, or untouched.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installImage is the image every case writes, in its forms.
type installImage struct {
	dir                string
	raw                []byte
	bootStart, bootEnd int64 // the boot partition, in bytes
	keyring            string
	otherKeyring       string
}

const (
	bootEntry = "title Test OS\nversion 1\nlinux /vmlinuz-1\ninitrd /initramfs-1.img\noptions root=LABEL=root ignition.platform.id=metal console=tty0 quiet rw  \n"
	oldEntry  = "title Test OS (old)\nversion 0\nlinux /vmlinuz-0\noptions root=LABEL=root ignition.platform.id=metal quiet\n"
)

// buildInstallImage makes the image on a loop device with sgdisk and
// mkfs.ext4, then writes its raw, xz and zstd files, signatures of them
// made with gpg and a key generated here, and the keyrings (the
// signer's, and another key's).
func buildInstallImage(t *testing.T) installImage {
	t.Helper()
	for _, tool := range []string{"xz", "zstd", "gzip", "gpg"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the install cases need %s", tool)
		}
	}
	dir := t.TempDir()
	l := attach(t, dir, 0, 48, 512)
	sh(t, "sgdisk", "-n1:2048:+16M", "-c1:boot", "-t1:8300", "-n2:0:+20M", "-c2:root", "-t2:8300", l.dev)
	rescan(t, l, []int{1, 2})
	sh(t, "mkfs.ext4", "-q", "-L", "boot", l.partNode(1))
	sh(t, "mkfs.ext4", "-q", "-L", "root", l.partNode(2))
	mnt := mountDir(t, dir, l.partNode(1), "ext4", false)
	writeFile(t, filepath.Join(mnt, "loader/entries/ostree-1.conf"), bootEntry, 0o644)
	writeFile(t, filepath.Join(mnt, "loader/entries/ostree-0.conf"), oldEntry, 0o644)
	writeFile(t, filepath.Join(mnt, "grub2/grub.cfg"), "set timeout=1\n# CONSOLE-SETTINGS-START\nterminal_output console\n# CONSOLE-SETTINGS-END\nblscfg\n", 0o644)
	unmount(t, mnt)
	mnt = mountDir(t, dir, l.partNode(2), "ext4", false)
	random := make([]byte, 3<<20)
	for i := range random {
		random[i] = byte(i*7919 + i/251)
	}
	writeFile(t, filepath.Join(mnt, "usr/blob"), string(random), 0o644)
	unmount(t, mnt)
	shTry("partx", "-d", l.dev)
	raw, err := os.ReadFile(l.image)
	if err != nil {
		t.Fatal(err)
	}
	img := installImage{dir: dir, raw: raw, bootStart: 2048 * 512, bootEnd: (2048 + 16*2048) * 512}
	writeFile(t, filepath.Join(dir, "os.raw"), string(raw), 0o644)
	sh(t, "xz", "-T1", "-3", "-k", filepath.Join(dir, "os.raw"))
	sh(t, "zstd", "-q", "-3", "-k", filepath.Join(dir, "os.raw"))
	sh(t, "gzip", "-k", filepath.Join(dir, "os.raw"))

	home := filepath.Join(dir, "gnupg")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	gpg := func(args ...string) {
		t.Helper()
		sh(t, "gpg", append([]string{"--homedir", home, "--batch", "--no-tty", "--passphrase", ""}, args...)...)
	}
	// Making keys and signing starts gpg-agent in the home: stop it.
	t.Cleanup(func() { shTry("gpgconf", "--homedir", home, "--kill", "all") })
	gpg("--quick-generate-key", "flint test <test@example.invalid>", "ed25519", "sign", "never")
	gpg("--quick-generate-key", "someone else <else@example.invalid>", "ed25519", "sign", "never")
	img.keyring, img.otherKeyring = filepath.Join(dir, "keyring.gpg"), filepath.Join(dir, "other.gpg")
	gpg("--output", img.keyring, "--export", "test@example.invalid")
	gpg("--output", img.otherKeyring, "--export", "else@example.invalid")
	for _, name := range []string{"os.raw.xz", "os.raw.zst", "os.raw"} {
		gpg("--local-user", "test@example.invalid", "--output", filepath.Join(dir, name+".sig"), "--detach-sign", filepath.Join(dir, name))
	}
	// A signature by the right key over other bytes: it verifies only at
	// the end of the stream.
	writeFile(t, filepath.Join(dir, "other-bytes"), "not the image", 0o644)
	gpg("--local-user", "test@example.invalid", "--output", filepath.Join(dir, "wrong.sig"), "--detach-sign", filepath.Join(dir, "other-bytes"))
	return img
}

func writeFile(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func sha256File(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return "sha256-" + hex.EncodeToString(sum[:])
}

// imageServer serves the image directory, plus /trunc/NAME (the headers
// promise the whole file, half comes, the connection closes) and
// /reset/NAME (half comes, then a TCP reset).
func imageServer(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, mode := range []string{"/trunc/", "/reset/"} {
			name, ok := strings.CutPrefix(r.URL.Path, mode)
			if !ok {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, filepath.Base(name)))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			if strings.HasSuffix(name, ".sig") {
				w.Write(data)
				return
			}
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/octet-stream\r\n\r\n", len(data))
			buf.Write(data[:len(data)/2])
			buf.Flush()
			if mode == "/reset/" {
				// Give the client time to read what was sent: a reset
				// discards what its socket has not delivered yet.
				time.Sleep(500 * time.Millisecond)
				conn.(*net.TCPConn).SetLinger(0)
			}
			conn.Close()
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// installTarget is a 96 MiB loop device with a table the install must
// replace: partition 1 "old" and partition 9 "data" (ext4, holding a
// file) at 64 MiB.
func installTarget(t *testing.T, dir string) loopDisk {
	t.Helper()
	l := attach(t, dir, 1, 96, 512)
	sh(t, "sgdisk", "-n1:0:+8M", "-c1:old", "-n9:64M:0", "-c9:data", l.dev)
	rescan(t, l, []int{1, 9})
	sh(t, "mkfs.ext4", "-q", "-L", "data", l.partNode(9))
	mnt := mountDir(t, dir, l.partNode(9), "ext4", false)
	writeFile(t, filepath.Join(mnt, "keep"), "kept across the install\n", 0o644)
	unmount(t, mnt)
	return l
}

func readDev(t *testing.T, dev string) []byte {
	t.Helper()
	data, err := os.ReadFile(dev)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// noPartitionTable checks a failed install left no table: the first MiB
// (protective MBR and primary GPT) and the last sector (backup header)
// are zero, and blkid finds no partition table.
func noPartitionTable(t *testing.T, disk []byte, dev string) {
	t.Helper()
	if !bytes.Equal(disk[:1<<20], make([]byte, 1<<20)) {
		t.Errorf("the first MiB of %s is not zero after a failed install", dev)
	}
	if !bytes.Equal(disk[len(disk)-512:], make([]byte, 512)) {
		t.Errorf("the last sector of %s (backup GPT header) is not zero after a failed install", dev)
	}
	if out, _, _ := shTry("blkid", "-p", "-o", "export", dev); strings.Contains(out, "PTTYPE") {
		t.Errorf("blkid still finds a partition table on %s:\n%s", dev, out)
	}
}

// equalExcept compares the disk with the image over the image's length,
// except in the given byte ranges.
func equalExcept(t *testing.T, disk, image []byte, except ...[2]int64) {
	t.Helper()
	from := int64(0)
	except = append(except, [2]int64{int64(len(image)), int64(len(image))})
	for _, r := range except {
		if !bytes.Equal(disk[from:r[0]], image[from:r[0]]) {
			i := from
			for i < r[0] && disk[i] == image[i] {
				i++
			}
			t.Errorf("disk differs from the image at byte %d", i)
			return
		}
		from = r[1]
	}
}

func runInstall(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"install"}, args...)...)
	out, err := cmd.CombinedOutput()
	t.Logf("flint install %s:\n%s", strings.Join(args, " "), out)
	return string(out), err
}

func TestInstall(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	img := buildInstallImage(t)
	srv := imageServer(t, img.dir)
	cfg := filepath.Join(img.dir, "config.ign")
	const config = `{"ignition": {"version": "3.4.0"}, "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA test"]}]}}` + "\n"
	writeFile(t, cfg, config, 0o644)
	netDir := filepath.Join(img.dir, "nm")
	writeFile(t, filepath.Join(netDir, "eth0.nmconnection"), "[connection]\nid=eth0\ntype=ethernet\n", 0o600)

	t.Run("url-xz-signed-saved-partition", func(t *testing.T) {
		dir := t.TempDir()
		l := installTarget(t, dir)
		_, err := runInstall(t, bin, "-u", srv.URL+"/os.raw.xz", "--keyring", img.keyring,
			"-i", cfg, "--save-partlabel", "da*", "-p", "qemu", "--append-karg", "foo=bar",
			"--delete-karg", "quiet", "--firstboot-args", "rd.neednet=1 ip=dhcp",
			"--console", "ttyS0,115200n8", "-n", "--network-dir", netDir, l.dev)
		if err != nil {
			t.Fatalf("flint install: %v", err)
		}
		rescan(t, l, []int{1, 2, 9})
		want := map[int]kernelPart{1: {2048, 32768}, 2: {34816, 40960}, 9: {131072, 96*2048 - 131072 - 33}}
		if got := kernelParts(l); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("partitions after the install = %v, want %v", got, want)
		}
		out := sh(t, "sgdisk", "-p", l.dev)
		for _, name := range []string{" boot\n", " root\n", " data\n"} {
			if !strings.Contains(out, name) {
				t.Errorf("sgdisk -p %s lacks partition name %q:\n%s", l.dev, name, out)
			}
		}
		if strings.Contains(out, " old\n") {
			t.Errorf("the old partition 1 survived:\n%s", out)
		}
		mnt := mountDir(t, dir, l.partNode(9), "ext4", true)
		if got, _ := os.ReadFile(filepath.Join(mnt, "keep")); string(got) != "kept across the install\n" {
			t.Errorf("saved partition's file = %q", got)
		}
		unmount(t, mnt)
		disk := readDev(t, l.dev)
		// Outside the table (which now spans the disk and holds the saved
		// partition) and the boot filesystem, the disk is the image.
		equalExcept(t, disk, img.raw, [2]int64{0, 34 * 512}, [2]int64{img.bootStart, img.bootEnd})

		mnt = mountDir(t, dir, l.partNode(1), "ext4", true)
		defer unmount(t, mnt)
		checkMode(t, filepath.Join(mnt, "ignition"), os.ModeDir|0o700)
		checkMode(t, filepath.Join(mnt, "ignition/config.ign"), 0o600)
		checkContent(t, filepath.Join(mnt, "ignition/config.ign"), config)
		checkContent(t, filepath.Join(mnt, "ignition.firstboot"), "set ignition_network_kcmdline=\"rd.neednet=1 ip=dhcp\"\n")
		checkContent(t, filepath.Join(mnt, "loader/entries/ostree-1.conf"),
			"title Test OS\nversion 1\nlinux /vmlinuz-1\ninitrd /initramfs-1.img\noptions root=LABEL=root ignition.platform.id=qemu console=tty0 rw console=ttyS0,115200n8 foo=bar\n")
		checkContent(t, filepath.Join(mnt, "loader/entries/ostree-0.conf"), oldEntry)
		checkContent(t, filepath.Join(mnt, "grub2/grub.cfg"),
			"set timeout=1\n# CONSOLE-SETTINGS-START\nserial --unit=0 --speed=115200 --word=8 --parity=no\nterminal_input serial\nterminal_output serial\n# CONSOLE-SETTINGS-END\nblscfg\n")
		checkContent(t, filepath.Join(mnt, "coreos-firstboot-network/eth0.nmconnection"), "[connection]\nid=eth0\ntype=ethernet\n")
		checkMode(t, filepath.Join(mnt, "coreos-firstboot-network/eth0.nmconnection"), 0o600)
	})

	// The same install under coreos-installer's name and syntax (a
	// comma-separated --save-partlabel), then rdcore editing the installed
	// boot filesystem's kernel arguments as Fedora CoreOS's coreos-kargs.sh
	// does, on the real device.
	t.Run("coreos-installer-then-rdcore", func(t *testing.T) {
		dir := t.TempDir()
		l := installTarget(t, dir)
		file := filepath.Join(img.dir, "os.raw.xz")
		args := []string{"coreos-installer", "install", "-f", file, "--image-hash", sha256File(t, file), "-i", cfg,
			"--save-partlabel", "nomatch,da*", "--append-karg", "foo=bar", l.dev}
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("flint %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		rescan(t, l, []int{1, 2, 9})
		mnt := mountDir(t, dir, l.partNode(9), "ext4", true)
		if got, _ := os.ReadFile(filepath.Join(mnt, "keep")); string(got) != "kept across the install\n" {
			t.Errorf("saved partition's file = %q", got)
		}
		unmount(t, mnt)
		flag := filepath.Join(dir, "coreos-kargs-reboot")
		args = []string{"rdcore", "kargs", "--boot-device", l.partNode(1), "--create-if-changed", flag,
			"--should-exist", "ignition.test=1", "--should-not-exist", "quiet"}
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("flint %s: %v", strings.Join(args, " "), err)
		}
		want := "root=LABEL=root ignition.platform.id=metal console=tty0 rw foo=bar ignition.test=1"
		if string(out) != want+"\n" {
			t.Errorf("rdcore kargs printed %q, want %q", out, want)
		}
		if _, err := os.Stat(flag); err != nil {
			t.Errorf("rdcore kargs did not create its flag file: %v", err)
		}
		mnt = mountDir(t, dir, l.partNode(1), "ext4", true)
		defer unmount(t, mnt)
		checkContent(t, filepath.Join(mnt, "loader/entries/ostree-1.conf"),
			"title Test OS\nversion 1\nlinux /vmlinuz-1\ninitrd /initramfs-1.img\noptions "+want+"\n")
		checkContent(t, filepath.Join(mnt, "loader/entries/ostree-0.conf"), oldEntry)
	})

	for _, c := range []struct{ name, file string }{{"file-zstd-hash", "os.raw.zst"}, {"file-gzip-hash", "os.raw.gz"}, {"file-raw-hash", "os.raw"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := installTarget(t, dir)
			file := filepath.Join(img.dir, c.file)
			if _, err := runInstall(t, bin, "--image-file", file, "--image-hash", sha256File(t, file), "-i", cfg, l.dev); err != nil {
				t.Fatalf("flint install: %v", err)
			}
			disk := readDev(t, l.dev)
			equalExcept(t, disk, img.raw, [2]int64{img.bootStart, img.bootEnd})
			rescan(t, l, []int{1, 2})
			mnt := mountDir(t, dir, l.partNode(1), "ext4", true)
			defer unmount(t, mnt)
			checkContent(t, filepath.Join(mnt, "ignition/config.ign"), config)
			checkContent(t, filepath.Join(mnt, "ignition.firstboot"), "")
			checkContent(t, filepath.Join(mnt, "loader/entries/ostree-1.conf"), bootEntry)
		})
	}

	// Failures after the disk was written to: no partition table, or with
	// --preserve-on-error what was written (the image but its first MiB).
	for _, c := range []struct {
		name     string
		args     []string
		preserve bool
	}{
		{"wrong-hash", []string{"-u", srv.URL + "/os.raw.xz", "--image-hash", "sha256-" + strings.Repeat("0", 64), "--keyring", img.keyring}, false},
		{"wrong-hash-preserved", []string{"-u", srv.URL + "/os.raw.xz", "--image-hash", "sha256-" + strings.Repeat("0", 64), "--keyring", img.keyring}, true},
		{"wrong-signature", []string{"-u", srv.URL + "/os.raw.xz", "--keyring", img.keyring, "--image-sig", filepath.Join(img.dir, "wrong.sig")}, false},
		{"truncated-download", []string{"-u", srv.URL + "/trunc/os.raw", "--keyring", img.keyring}, false},
		{"server-reset", []string{"-u", srv.URL + "/reset/os.raw", "--keyring", img.keyring}, false},
		{"server-reset-preserved", []string{"-u", srv.URL + "/reset/os.raw", "--keyring", img.keyring}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := installTarget(t, dir)
			args := append([]string{"-i", cfg}, c.args...)
			if c.preserve {
				args = append(args, "--preserve-on-error")
			}
			out, err := runInstall(t, bin, append(args, l.dev)...)
			if err == nil {
				t.Fatalf("flint install succeeded; want a failure")
			}
			disk := readDev(t, l.dev)
			if !c.preserve {
				noPartitionTable(t, disk, l.dev)
				return
			}
			if !strings.Contains(out, "preserve-on-error") {
				t.Errorf("output does not say the table was left as asked")
			}
			if !bytes.Equal(disk[:1<<20], make([]byte, 1<<20)) {
				t.Errorf("the first MiB was written although the image failed its checks")
			}
			// What came is on the disk: all of the xz image, half of the
			// raw one.
			n := int64(len(img.raw))
			if strings.Contains(c.name, "reset") {
				n = 16 << 20
			}
			if !bytes.Equal(disk[1<<20:n], img.raw[1<<20:n]) {
				t.Errorf("the disk does not hold what was written before the failure")
			}
		})
	}

	// Refusals before the disk is touched.
	bad := filepath.Join(img.dir, "bad.ign")
	writeFile(t, bad, `{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "etc/motd"}]}}`, 0o644)
	for _, c := range []struct {
		name  string
		args  []string
		mount bool
		want  string
	}{
		{"invalid-config", []string{"-i", bad, "-f", filepath.Join(img.dir, "os.raw.xz"), "--insecure"}, false, "line 1 col"},
		{"mounted-target", []string{"-i", cfg, "-f", filepath.Join(img.dir, "os.raw.xz"), "--insecure"}, true, "is mounted on"},
		{"local-file-wrong-hash", []string{"-f", filepath.Join(img.dir, "os.raw.xz"), "--image-hash", "sha256-" + strings.Repeat("1", 64)}, false, "digest mismatch"},
		{"local-file-unsigned", []string{"-f", filepath.Join(img.dir, "os.raw.gz"), "--keyring", img.keyring}, false, "--insecure"},
		{"local-file-unknown-signer", []string{"-f", filepath.Join(img.dir, "os.raw.xz"), "--keyring", img.otherKeyring}, false, "bad signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := installTarget(t, dir)
			if c.mount {
				mnt := mountDir(t, dir, l.partNode(9), "ext4", false)
				defer unmount(t, mnt)
			}
			before := sha256.Sum256(readDev(t, l.dev))
			out, err := runInstall(t, bin, append(c.args, l.dev)...)
			if err == nil {
				t.Fatalf("flint install succeeded; want a refusal")
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output lacks %q", c.want)
			}
			if after := sha256.Sum256(readDev(t, l.dev)); after != before {
				t.Errorf("the disk changed although the install was refused")
			}
		})
	}

	t.Run("partition-refused", func(t *testing.T) {
		dir := t.TempDir()
		l := installTarget(t, dir)
		out, err := runInstall(t, bin, "-i", cfg, "-f", filepath.Join(img.dir, "os.raw.xz"), "--insecure", l.partNode(9))
		if err == nil || !strings.Contains(out, "give the whole disk") {
			t.Errorf("flint install on a partition: err %v; want a refusal naming the whole disk", err)
		}
	})
}

func checkMode(t *testing.T, name string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Error(err)
		return
	}
	if fi.Mode() != want {
		t.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
	}
}

func checkContent(t *testing.T, name, want string) {
	t.Helper()
	got, err := os.ReadFile(name)
	if err != nil {
		t.Error(err)
		return
	}
	if string(got) != want {
		t.Errorf("%s = %q, want %q", name, got, want)
	}
}
