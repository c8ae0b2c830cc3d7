//go:build linux

package blackbox

// flint apply against its own plan: `flint plan -json` before, then
// apply, then the tree (or the image) is compared with what the plan
// listed: everything it lists is there as planned, and nothing else
// changed.

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// treeEntry is one node of a walked tree: its type, mode, owner, and its
// contents' hash or link target.
type treeEntry string

// walkTree returns every node under root, by path relative to it.
func walkTree(t *testing.T, root string) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		e := fmt.Sprintf("%v %d:%d", info.Mode(), st.Uid, st.Gid)
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e += fmt.Sprintf(" %x", sha256.Sum256(b))
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			e += " -> " + target
		}
		out[rel] = treeEntry(e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runApply runs flint apply, wanting exit status wantCode; it returns
// standard output and error.
func runApply(t *testing.T, bin string, wantCode int, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"apply"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("flint apply: %v", err)
	}
	if code != wantCode {
		t.Fatalf("flint apply %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

const applyRootConfig = `variant: fcos
version: 1.5.0
storage:
  directories:
    - path: /srv/data
      mode: 0750
  files:
    - path: /etc/motd
      mode: 0600
      contents:
        inline: hello from apply
    - path: /etc/hostname
      overwrite: true
      contents:
        inline: node1
  links:
    - path: /etc/localtime
      target: ../usr/share/zoneinfo/UTC
systemd:
  units:
    - name: hello.service
      enabled: true
      contents: |
        [Unit]
        Description=hello
        [Service]
        ExecStart=/bin/true
        [Install]
        WantedBy=multi-user.target
`

func TestApplyRootWritesThePlan(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for p, c := range map[string]string{"/etc/hostname": "old", "/etc/os-release": "ID=test\n", "/var/keep/me": "kept"} {
		if err := os.MkdirAll(filepath.Dir(root+p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(root+p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "config.bu")
	if err := os.WriteFile(cfg, []byte(applyRootConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	before := walkTree(t, root)
	p := runPlan(t, bin, 0, "-root", root, cfg)
	if after := walkTree(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("flint plan changed the root")
	}
	runApply(t, bin, 0, "-root", root, cfg)
	after := walkTree(t, root)

	// What the plan lists, and the directories above it.
	listed := map[string]string{}
	for _, n := range p.Nodes {
		listed[n.Path] = n.Kind
	}
	for _, u := range p.Units {
		for _, a := range u.Actions {
			f := strings.Fields(a)
			switch {
			case f[0] == "create" || f[0] == "replace":
				listed[f[1]] = "file"
			case f[0] == "preset":
				listed[f[len(f)-1]] = "file"
			}
		}
	}
	above := map[string]bool{"/": true}
	for p := range listed {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			above[d] = true
		}
	}
	for p, kind := range listed {
		e, ok := after[p]
		if !ok {
			t.Errorf("%s: the plan lists a %s, apply did not write it", p, kind)
			continue
		}
		want := map[string]string{"file": "-", "directory": "d", "link": "L"}[kind]
		if !strings.HasPrefix(string(e), want) {
			t.Errorf("%s: %s, the plan lists a %s", p, e, kind)
		}
	}
	for p, e := range after {
		if before[p] == e {
			continue
		}
		if _, ok := listed[p]; ok {
			continue
		}
		if above[p] && strings.HasPrefix(string(e), "d") {
			continue
		}
		t.Errorf("%s changed (%q, was %q): the plan does not list it", p, e, before[p])
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: removed, the plan does not say so", p)
		}
	}
	if e := after["/etc/motd"]; !strings.HasPrefix(string(e), "-rw------- 0:0 "+fmt.Sprintf("%x", sha256.Sum256([]byte("hello from apply")))) {
		t.Errorf("/etc/motd: %s, want 0600 root, the config's contents", e)
	}
	if _, ok := after["/etc/.ignition-result.json"]; ok {
		t.Error("apply wrote the result file: the machine has not booted")
	}
	// The plan after apply: nothing left to do.
	again := runPlan(t, bin, 0, "-root", root, cfg)
	for _, n := range again.Nodes {
		if n.Action != "unchanged" {
			t.Errorf("plan after apply: %s %s: %s, want unchanged", n.Kind, n.Path, n.Action)
		}
	}
}

func TestApplyRefusesTheRunningRoot(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	cfg := filepath.Join(t.TempDir(), "c.ign")
	if err := os.WriteFile(cfg, []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/tmp/flint-apply-must-not-exist"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-root", "/"}, {"-root", "/.", "-allow-running"}, {"-root", "//"}} {
		_, stderr := runApply(t, bin, 1, append(args, cfg)...)
		if !strings.Contains(stderr, "running system's root") {
			t.Errorf("apply %v: %q, want the running root refused", args, stderr)
		}
	}
	if _, err := os.Lstat("/tmp/flint-apply-must-not-exist"); err == nil {
		os.Remove("/tmp/flint-apply-must-not-exist")
		t.Error("apply wrote under the running root")
	}
}

const applyImageConfig = `variant: fcos
version: 1.5.0
storage:
  disks:
    - device: /dev/vda
      wipe_table: true
      partitions:
        - number: 1
          label: boot
          size_mib: 16
        - number: 2
          label: root
  filesystems:
    - device: /dev/vda1
      format: vfat
      label: BOOT
    - device: /dev/vda2
      format: ext4
      label: root
      path: /
  directories:
    - path: /var/lib/app
  files:
    - path: /etc/motd
      contents:
        inline: provisioned offline
`

func TestApplyImage(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 128<<20); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.bu")
	if err := os.WriteFile(cfg, []byte(applyImageConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, _ := runApply(t, bin, 0, "-json", "-disk", "/dev/vda="+img, cfg)
	var p planJSON
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || len(p.Disks) != 1 {
		t.Fatalf("apply -json printed no plan (%v):\n%s", err, stdout)
	}
	if out, _, _ := shTry("losetup", "--associated", img); strings.TrimSpace(out) != "" {
		t.Errorf("the image is still attached: %s", out)
	}
	l := attachImage(t, img)
	// The table is the plan's, partition for partition, sector for
	// sector, and nothing more.
	_, parts, _ := readTable(t, l)
	if len(parts) != len(p.Disks[0].Partitions) {
		t.Errorf("the image has %d partitions, the plan %d: %+v", len(parts), len(p.Disks[0].Partitions), parts)
	}
	for _, q := range p.Disks[0].Partitions {
		got := parts[q.Number]
		if q.Action != "create" || got.Start != q.Start || got.Size != q.Size || got.Label != q.Label {
			t.Errorf("partition %d: %q at %d+%d, the plan said %s %q at %d+%d", q.Number, got.Label, got.Start, got.Size, q.Action, q.Label, q.Start, q.Size)
		}
	}
	if len(p.Filesystems) != 2 {
		t.Errorf("plan filesystems: %+v, want 2", p.Filesystems)
	}
	for _, f := range p.Filesystems {
		// The plan names the loop device apply attached; the image is
		// on another one now.
		n := f.Device[strings.LastIndex(f.Device, "p")+1:]
		if b := blkid(t, l.dev+"p"+n); b["TYPE"] != f.Format || f.Action != "create" {
			t.Errorf("%s: blkid %v, the plan said %s %s", f.Device, b, f.Action, f.Format)
		}
	}
	if b := blkid(t, l.partNode(1)); b["TYPE"] != "vfat" || b["LABEL"] != "BOOT" {
		t.Errorf("partition 1: %v, want vfat BOOT", b)
	}
	mnt := mountDir(t, dir, l.partNode(2), "ext4", true)
	got, err := os.ReadFile(filepath.Join(mnt, "etc/motd"))
	if err != nil || string(got) != "provisioned offline" {
		t.Errorf("/etc/motd on the image: %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(mnt, "var/lib/app")); err != nil || !fi.IsDir() {
		t.Errorf("/var/lib/app on the image: %v", err)
	}
	unmount(t, mnt)

	sum := fileHash(t, img)
	detach(t, l)
	// Again: the same layout is kept, nothing is lost, and the files
	// are already what the config writes.
	runApply(t, bin, 0, "-disk", img, cfg)
	// A smaller boot partition moves the root partition: both are lost,
	// refused without -allow-data-loss, the image untouched.
	sum = fileHash(t, img)
	smaller := filepath.Join(dir, "smaller.bu")
	if err := os.WriteFile(smaller, []byte(strings.Replace(applyImageConfig, "size_mib: 16", "size_mib: 8", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr := runApply(t, bin, 1, "-disk", img, smaller)
	if !strings.Contains(stderr, "destroys data") || !strings.Contains(stderr, "-allow-data-loss") {
		t.Errorf("apply over a provisioned image: %q, want data loss refused", stderr)
	}
	if fileHash(t, img) != sum {
		t.Error("a refused apply changed the image")
	}
	if out, _, _ := shTry("losetup", "--associated", img); strings.TrimSpace(out) != "" {
		t.Errorf("the image is still attached after a refusal: %s", out)
	}
}

func TestApplyRefusesMountedAndForeignDevices(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	sh(t, "sgdisk", "-n", "1:2048:0", img)
	l := attachImage(t, img)
	sh(t, "mkfs.ext4", "-q", l.partNode(1))
	mnt := mountDir(t, dir, l.partNode(1), "ext4", false)
	cfg := filepath.Join(dir, "c.ign")
	if err := os.WriteFile(cfg, []byte(`{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"`+l.dev+`","wipeTable":true}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr := runApply(t, bin, 1, "-disk", l.dev, "-allow-data-loss", cfg)
	if !strings.Contains(stderr, "is mounted on "+mnt) {
		t.Errorf("apply on a mounted disk: %q, want it refused", stderr)
	}
	unmount(t, mnt)
	// A config naming a disk not given with -disk.
	other := filepath.Join(dir, "other.ign")
	if err := os.WriteFile(other, []byte(`{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[{"device":"/dev/sda1","format":"ext4"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr = runApply(t, bin, 1, "-disk", l.dev, other)
	if !strings.Contains(stderr, "names /dev/sda1, not a -disk") {
		t.Errorf("apply with a foreign device: %q, want it refused", stderr)
	}
}

// attachImage attaches img to a loop device with its partitions, detached
// when the test ends.
func attachImage(t *testing.T, img string) loopDisk {
	t.Helper()
	dev := strings.TrimSpace(sh(t, "losetup", "--find", "--show", "--partscan", img))
	shTry("partx", "--add", dev)
	l := loopDisk{dev: dev, image: img}
	t.Cleanup(func() { shTry("losetup", "--detach", dev) })
	return l
}

func detach(t *testing.T, l loopDisk) {
	t.Helper()
	sh(t, "losetup", "--detach", l.dev)
}
