package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/sys"
)

// bootDir is a boot filesystem with two BLS entries: rdcore edits the
// newest (the one sorting last), as coreos-installer's visit_bls_entry.
func bootDir(t *testing.T, opts string) string {
	dir := t.TempDir()
	entries := filepath.Join(dir, "loader/entries")
	os.MkdirAll(entries, 0o755)
	os.WriteFile(filepath.Join(entries, "ostree-1.conf"), []byte("title old\noptions old=1\n"), 0o644)
	os.WriteFile(filepath.Join(entries, "ostree-2.conf"), []byte("title Fedora CoreOS\nlinux /vmlinuz\noptions "+opts+"  \n"), 0o644)
	return dir
}

func runRdcoreLine(t *testing.T, args []string, stdin string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runAs(context.Background(), "rdcore", args, strings.NewReader(stdin), &out, &errb)
	return exitCode(err, &errb), out.String(), errb.String()
}

// rdcore kargs as Fedora CoreOS's coreos-kargs.sh calls it, on a boot
// directory: the newest entry edited, the line printed, the flag file
// created only on a change.
func TestRdcoreKargs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    string
		args    []string
		printed string
		entry   string // the newest entry's options line afterwards
		changed bool
	}{
		{"append", "root=UUID=x rw", []string{"--append", "console=ttyS0", "--append", "rw"}, "root=UUID=x rw console=ttyS0 rw", "options root=UUID=x rw console=ttyS0 rw", true},
		{"append if missing", "root=UUID=x rw", []string{"--append-if-missing", "rw", "--should-exist", "quiet"}, "root=UUID=x rw quiet", "options root=UUID=x rw quiet", true},
		{"delete", "root=UUID=x mitigations=auto rw mitigations=auto", []string{"--delete", "mitigations=auto"}, "root=UUID=x rw", "options root=UUID=x rw", true},
		{"delete then append", "a b", []string{"--should-not-exist", "b", "--append", "b"}, "a b", "options a b  ", false},
		{"nothing asked", "a b", nil, "a b", "options a b  ", false},
	} {
		dir := bootDir(t, tc.opts)
		flag := filepath.Join(t.TempDir(), "coreos-kargs-reboot")
		args := append([]string{"kargs", "--boot-mount", dir, "--create-if-changed", flag}, tc.args...)
		code, out, errOut := runRdcoreLine(t, args, "")
		if code != 0 || out != tc.printed+"\n" {
			t.Errorf("%s: rdcore %q = exit %d, %q %s; want 0, %q", tc.name, args, code, out, errOut, tc.printed+"\n")
		}
		raw, _ := os.ReadFile(filepath.Join(dir, "loader/entries/ostree-2.conf"))
		if !strings.Contains(string(raw), tc.entry+"\n") {
			t.Errorf("%s: entry = %q, want the line %q", tc.name, raw, tc.entry)
		}
		if old, _ := os.ReadFile(filepath.Join(dir, "loader/entries/ostree-1.conf")); string(old) != "title old\noptions old=1\n" {
			t.Errorf("%s: the older entry was edited: %q", tc.name, old)
		}
		if _, err := os.Stat(flag); (err == nil) != tc.changed {
			t.Errorf("%s: flag file exists = %v, want %v", tc.name, err == nil, tc.changed)
		}
	}
}

// --current is the dry run on the running kernel's command line; nothing
// but the flag file is written.
func TestRdcoreKargsCurrent(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("BOOT_IMAGE=/vmlinuz root=UUID=x quiet\n"), 0o644)
	flag := filepath.Join(t.TempDir(), "coreos-kargs-changed")
	code, out, _ := runRdcoreLine(t, []string{"kargs", "--current", "--flint-root", root, "--create-if-changed", flag, "--should-not-exist", "quiet"}, "")
	if code != 0 || out != "BOOT_IMAGE=/vmlinuz root=UUID=x\n" {
		t.Errorf("rdcore kargs --current = %d %q, want the edited line", code, out)
	}
	if _, err := os.Stat(flag); err != nil {
		t.Errorf("flag file not created: %v", err)
	}
	code, out, _ = runRdcoreLine(t, []string{"kargs", "--override-options", " a b ", "--append-if-missing", "a"}, "")
	if code != 0 || out != "a b\n" {
		t.Errorf("rdcore kargs --override-options = %d %q, want %q", code, out, "a b\n")
	}
}

func TestRdcoreCommandLine(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--version"}, 0, "rdcore 0.26.0 (flint "},
		{[]string{"kargs", "--help"}, 0, "--create-if-changed <PATH>"},
		{[]string{"frob"}, 2, "error: unrecognized subcommand 'frob'"},
		{[]string{"kargs", "--append", "x"}, 1, "Error: one of --boot-device, --boot-mount, or --current required"},
		{[]string{"kargs", "--current", "--boot-device", "/dev/vda3"}, 2, "cannot be used with"},
		{[]string{"kargs", "--replace", "a=b=c", "--current"}, 2, "error: unexpected argument '--replace' found"},
		{[]string{"kargs", "--boot-mount", empty, "--append", "x"}, 1, "Error: visiting BLS options: BLS entries:"},
		{[]string{"rootmap", "/sysroot", "--boot-mount", "/boot", "--flint-root", empty}, 1, "Error: Configuring rootmap: reading mount table:"},
		{[]string{"bind-boot", "/sysroot", "/boot", "--flint-root", empty}, 1, "Error: Failed to bind boot: reading mount table:"},
		{[]string{"bind-boot", "/sysroot"}, 2, "required arguments were not provided:\n  <BOOT_MOUNT>"},
		{[]string{"stream-hash"}, 2, "<hash-file>"},
		{[]string{"stream-hash", filepath.Join(empty, "none")}, 1, "Error: opening "},
		{[]string{"verify-unique-fs-label"}, 2, "<LABEL>"},
	} {
		code, out, errOut := runRdcoreLine(t, tc.args, "")
		if all := out + errOut; code != tc.code || !strings.Contains(all, tc.want) {
			t.Errorf("rdcore %q: exit %d, output\n%s\nwant exit %d and %q", tc.args, code, all, tc.code, tc.want)
		}
	}
}

// rdcore stream-hash as coreos-livepxe-rootfs.sh pipes the rootfs
// through it.
func TestRdcoreStreamHash(t *testing.T) {
	data := strings.Repeat("rootfs!!", 3) + "tail1234"
	var hashes strings.Builder
	hashes.WriteString("stream-hash sha256 8\n")
	for i := 0; i < len(data); i += 8 {
		h := sha256.Sum256([]byte(data[i:min(i+8, len(data))]))
		hashes.WriteString(hex.EncodeToString(h[:]) + "\n")
	}
	file := filepath.Join(t.TempDir(), "want-rootfs")
	os.WriteFile(file, []byte(hashes.String()), 0o644)
	if code, out, errOut := runRdcoreLine(t, []string{"stream-hash", file}, data); code != 0 || out != data {
		t.Errorf("stream-hash = %d %q %s, want 0 and the data", code, out, errOut)
	}
	if code, _, errOut := runRdcoreLine(t, []string{"stream-hash", file}, data+"x"); code != 1 || !strings.Contains(errOut, "Error: found extra input data at offset 32") {
		t.Errorf("stream-hash of longer data = %d %q, want 1 and the offset", code, errOut)
	}
}

// fakeBlkid answers blkid's listing and probe with a device table, and
// records every argv.
type fakeBlkid struct {
	devs  []map[string]string
	argvs [][]string
}

func (f *fakeBlkid) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.argvs = append(f.argvs, append([]string{name}, args...))
	if name != "blkid" {
		return nil, nil
	}
	if slices.Contains(args, "device") {
		if len(f.devs) == 0 {
			return nil, &sys.CommandError{Argv: append([]string{name}, args...), ExitCode: 2}
		}
		var b strings.Builder
		for _, d := range f.devs {
			b.WriteString(d["DEVNAME"] + "\n")
		}
		return []byte(b.String()), nil
	}
	var b strings.Builder
	for _, d := range f.devs {
		if !slices.Contains(args, d["DEVNAME"]) {
			continue
		}
		fmt.Fprintf(&b, "DEVNAME=%s\n", d["DEVNAME"])
		for _, k := range []string{"LABEL", "UUID", "TYPE", "USAGE"} {
			if v, ok := d[k]; ok {
				fmt.Fprintf(&b, "%s=%s\n", k, v)
			}
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), nil
}

func TestVerifyUniqueFsLabel(t *testing.T) {
	boot := func(dev, uuid string) map[string]string {
		return map[string]string{"DEVNAME": dev, "LABEL": "boot", "UUID": uuid, "TYPE": "ext4", "USAGE": "filesystem"}
	}
	member := func(dev string) map[string]string {
		return map[string]string{"DEVNAME": dev, "LABEL": "boot", "UUID": "r", "TYPE": "linux_raid_member", "USAGE": "raid"}
	}
	for _, tc := range []struct {
		name string
		devs []map[string]string
		want string // "" for success
	}{
		{"one", []map[string]string{boot("/dev/vda3", "u1"), {"DEVNAME": "/dev/vda4", "LABEL": "root", "UUID": "u2"}}, ""},
		{"two", []map[string]string{boot("/dev/vda3", "u1"), boot("/dev/vdb3", "u3")}, `System has 2 devices with a filesystem labeled 'boot': ["/dev/vda3", "/dev/vdb3"]`},
		{"multipath paths to one", []map[string]string{boot("/dev/sda3", "u1"), boot("/dev/sdb3", "u1")}, ""},
		{"RAID array and its members", []map[string]string{member("/dev/vda3"), member("/dev/vdb3"), boot("/dev/md126", "u9")}, ""},
		{"members only", []map[string]string{member("/dev/vda3"), member("/dev/vdb3")}, `No assembled filesystem labeled 'boot', but found RAID member devices ["/dev/vda3", "/dev/vdb3"]. Is the RAID array degraded or failed to assemble?`},
		{"none", nil, "System has 0 devices with a filesystem labeled 'boot': []"},
	} {
		f := &fakeBlkid{devs: tc.devs}
		rereads := 0
		err := verifyUniqueFsLabel(context.Background(), f, "boot", func(context.Context) error { rereads++; return nil })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: verifyUniqueFsLabel = %v, want success", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: verifyUniqueFsLabel = %v, want %q", tc.name, err, tc.want)
		}
		if rereads != 1 {
			t.Errorf("%s: partition tables reread %d times, want once", tc.name, rereads)
		}
		if len(tc.devs) > 0 && (len(f.argvs) != 2 || !slices.Contains(f.argvs[1], "-p")) {
			t.Errorf("%s: blkid runs %q, want a listing then a probe (-p)", tc.name, f.argvs)
		}
	}
}

// fakeDisks is a stateful machine for bind-boot: blkid knows each
// device's UUID, lsblk the disks under a device and their partitions,
// and an ESP mounted in a directory shows its files there until it is
// unmounted, which keeps what was written.
type fakeDisks struct {
	uuids    map[string]string
	parents  map[string]string // lsblk --inverse output per device
	parts    map[string]string // lsblk NAME,PARTTYPE output per disk
	esps     map[string]map[string]string
	mounted  map[string]string // dir → device
	unmounts int
}

func (f *fakeDisks) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	last := args[len(args)-1]
	switch {
	case name == "blkid":
		if u, ok := f.uuids[last]; ok {
			return []byte("DEVNAME=" + last + "\nUUID=" + u + "\nTYPE=ext4\n"), nil
		}
		return nil, &sys.CommandError{Argv: append([]string{name}, args...), ExitCode: 2}
	case name == "lsblk" && slices.Contains(args, "--inverse"):
		return []byte(f.parents[last]), nil
	case name == "lsblk":
		return []byte(f.parts[last]), nil
	case name == "mount":
		dev := args[len(args)-2]
		for path, data := range f.esps[dev] {
			os.MkdirAll(filepath.Join(last, filepath.Dir(path)), 0o755)
			os.WriteFile(filepath.Join(last, path), []byte(data), 0o644)
		}
		f.mounted[last] = dev
		return nil, nil
	case name == "umount":
		dev := f.mounted[last]
		filepath.WalkDir(last, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(last, p)
				data, _ := os.ReadFile(p)
				f.esps[dev][rel] = string(data)
			}
			return nil
		})
		entries, _ := os.ReadDir(last)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(last, e.Name()))
		}
		delete(f.mounted, last)
		f.unmounts++
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %s %q", name, args)
}

// bind-boot as coreos-boot-edit.sh calls it: rdcore bind-boot /sysroot
// BOOTMNT, the boot filesystem on a partition beside an ESP.
func TestRdcoreBindBoot(t *testing.T) {
	if runtime.GOARCH == "s390x" {
		t.Skip("IBM Z binds no GRUB")
	}
	root := t.TempDir()
	boot := bootDir(t, "root=UUID=r1 rw")
	os.MkdirAll(filepath.Join(boot, "grub2"), 0o755)
	os.MkdirAll(filepath.Join(root, "proc/self"), 0o755)
	mounts := fmt.Sprintf("/dev/vda4 /sysroot/sysroot xfs rw 0 0\n/dev/vda3 %s ext4 rw 0 0\n", strings.ReplaceAll(boot, " ", `\040`))
	os.WriteFile(filepath.Join(root, "proc/self/mounts"), []byte(mounts), 0o644)
	f := &fakeDisks{
		uuids:   map[string]string{"/dev/vda3": "b-uuid", "/dev/vda4": "r-uuid"},
		parents: map[string]string{"/dev/vda3": "NAME=\"/dev/vda3\" TYPE=\"part\"\nNAME=\"/dev/vda\" TYPE=\"disk\"\n"},
		parts: map[string]string{"/dev/vda": `NAME="/dev/vda" PARTTYPE=""` + "\n" +
			`NAME="/dev/vda2" PARTTYPE="c12a7328-f81f-11d2-ba4b-00a0c93ec93b"` + "\n" +
			`NAME="/dev/vda3" PARTTYPE="0fc63daf-8483-4772-8e79-3d69d8477de4"` + "\n"},
		esps:    map[string]map[string]string{"/dev/vda2": {"EFI/fedora/grub.cfg": "# grub\n", "EFI/BOOT/BOOTX64.EFI": "x"}},
		mounted: map[string]string{},
	}
	if err := rdcoreBindBoot(context.Background(), f, root, "/sysroot", boot); err != nil {
		t.Fatalf("rdcoreBindBoot = %v", err)
	}
	for path, want := range map[string]string{
		filepath.Join(boot, "loader/entries/ostree-2.conf"): "options root=UUID=r1 rw boot=UUID=b-uuid\n",
		filepath.Join(boot, ".root_uuid"):                   "r-uuid\n",
		filepath.Join(boot, "grub2/bootuuid.cfg"):           "set BOOT_UUID=\"b-uuid\"\n",
		filepath.Join(root, "run/coreos/bootfs_uuid"):       "b-uuid\n",
	} {
		if raw, err := os.ReadFile(path); err != nil || !strings.Contains(string(raw), want) {
			t.Errorf("%s = %q (%v), want %q", path, raw, err, want)
		}
	}
	if got := f.esps["/dev/vda2"]["EFI/fedora/bootuuid.cfg"]; got != "set BOOT_UUID=\"b-uuid\"\n" || f.unmounts != 1 {
		t.Errorf("ESP bootuuid.cfg = %q, unmounts %d; want the drop-in and one unmount", got, f.unmounts)
	}
	// Again: boot= is there, so the entry and /run stay; the stamp
	// matches.
	os.Remove(filepath.Join(root, "run/coreos/bootfs_uuid"))
	if err := rdcoreBindBoot(context.Background(), f, root, "/sysroot", boot); err != nil {
		t.Fatalf("rdcoreBindBoot again = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "run/coreos/bootfs_uuid")); err == nil {
		t.Errorf("bootfs_uuid written though the entry already had boot=")
	}
	// A boot filesystem bound to another root is refused.
	os.WriteFile(filepath.Join(boot, ".root_uuid"), []byte("other\n"), 0o644)
	err := rdcoreBindBoot(context.Background(), f, root, "/sysroot", boot)
	if err == nil || err.Error() != "boot filesystem already bound to a root filesystem (UUID: other)" {
		t.Errorf("rdcoreBindBoot with another root's stamp = %v, want the refusal", err)
	}
	if err := rdcoreBindBoot(context.Background(), f, root, "/sysroot", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("rdcoreBindBoot of an unmounted dir = %v, want mountpoint not found", err)
	}
}

// fakeStack answers the storage tools with fixed outputs, keyed by argv,
// and records every call; an argv it does not know fails.
type fakeStack struct {
	out   map[string]string
	calls []string
}

func (f *fakeStack) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := strings.Join(append([]string{name}, args...), " ")
	f.calls = append(f.calls, argv)
	if out, ok := f.out[argv]; ok {
		return []byte(out), nil
	}
	return nil, fmt.Errorf("unexpected %s", argv)
}

// stackRoot lays out /dev, /sys/block and /proc/self/mounts for a root
// filesystem on LUKS on RAID1 (Fedora CoreOS's root reprovisioning with
// both), rootMount being the deployment.
func stackRoot(t *testing.T, rootMount, bootMount string, crypttab string) string {
	root := t.TempDir()
	for _, d := range []string{"dev/mapper", "sys/block/dm-0/slaves", "sys/block/md126/slaves", "proc/self"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, n := range []string{"dm-0", "md126", "vda4", "vdb4"} {
		os.WriteFile(filepath.Join(root, "dev", n), nil, 0o644)
	}
	os.Symlink("../dm-0", filepath.Join(root, "dev/mapper/root"))
	os.WriteFile(filepath.Join(root, "sys/block/dm-0/slaves/md126"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "sys/block/md126/slaves/vda4"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "sys/block/md126/slaves/vdb4"), nil, 0o644)
	mounts := fmt.Sprintf("/dev/mapper/root %s xfs rw 0 0\n/dev/mapper/root %s/sysroot xfs rw 0 0\n/dev/vda3 %s ext4 rw 0 0\n", rootMount, rootMount, bootMount)
	os.WriteFile(filepath.Join(root, "proc/self/mounts"), []byte(mounts), 0o644)
	os.MkdirAll(filepath.Join(rootMount, "etc"), 0o755)
	os.WriteFile(filepath.Join(rootMount, "etc/crypttab"), []byte(crypttab), 0o644)
	return root
}

func stackTools(rootMount string) *fakeStack {
	ls := func(dev, typ string) (string, string) {
		return "lsblk --pairs --paths --output NAME,TYPE --nodeps " + dev, fmt.Sprintf("NAME=%q TYPE=%q\n", dev, typ)
	}
	f := &fakeStack{out: map[string]string{
		"mdadm --detail --export /dev/md126":                           "MD_LEVEL=raid1\nMD_UUID=aa:bb:cc:dd\n",
		"dmsetup info --columns --noheadings -o uuid /dev/mapper/root": "CRYPT-LUKS2-1234-root\n",
		"dmsetup info --columns --noheadings -o name /dev/mapper/root": "root\n",
		"cryptsetup luksUUID /dev/md126":                               "1234\n",
		"blkid -p -o export /dev/mapper/root":                          "DEVNAME=/dev/mapper/root\nUUID=rootfs-uuid\nTYPE=xfs\n",
		"coreos-rootflags " + rootMount:                                "prjquota\n",
	}}
	for dev, typ := range map[string]string{"/dev/vda4": "part", "/dev/vdb4": "part", "/dev/md126": "raid1", "/dev/mapper/root": "crypt"} {
		k, v := ls(dev, typ)
		f.out[k] = v
	}
	return f
}

// rootmap as coreos-boot-edit.sh calls it, for a root on LUKS on RAID1:
// the arguments the initramfs needs, lowest device first, into the
// newest BLS entry.
func TestRdcoreRootmap(t *testing.T) {
	rootMount := t.TempDir()
	boot := bootDir(t, "ignition.platform.id=metal")
	root := stackRoot(t, rootMount, boot, "root UUID=1234 none luks\n")
	var out, errb bytes.Buffer
	p, err := rdcoreCommand().Parse([]string{"rootmap", rootMount, "--boot-mount", boot})
	if err != nil {
		t.Fatal(err)
	}
	f := stackTools(rootMount)
	if err := rdcoreRootmap(context.Background(), rdEnv{f, root}, p, &out, &errb); err != nil {
		t.Fatalf("rdcoreRootmap = %v (calls %q)", err, f.calls)
	}
	want := "rd.md.uuid=aa:bb:cc:dd rd.luks.name=1234=root root=UUID=rootfs-uuid rw rootflags=prjquota"
	raw, _ := os.ReadFile(filepath.Join(boot, "loader/entries/ostree-2.conf"))
	if !strings.Contains(string(raw), "options ignition.platform.id=metal "+want+"\n") {
		t.Errorf("entry = %q, want the options %q appended", raw, want)
	}
	if errb.String() != "Injected kernel arguments into BLS: "+want+"\n" || out.Len() != 0 {
		t.Errorf("stdout %q, stderr %q; want only the injected line on stderr", &out, &errb)
	}

	// Without a boot mount the arguments are printed; a _netdev volume
	// needs the network in the initramfs.
	root = stackRoot(t, rootMount, boot, "# comment\nroot UUID=1234 none luks,_netdev\n")
	p, _ = rdcoreCommand().Parse([]string{"rootmap", rootMount})
	out.Reset()
	if err := rdcoreRootmap(context.Background(), rdEnv{stackTools(rootMount), root}, p, &out, &errb); err != nil {
		t.Fatalf("rdcoreRootmap (print) = %v", err)
	}
	if want := "rd.md.uuid=aa:bb:cc:dd rd.luks.name=1234=root rd.neednet=1 rd.luks.options=_netdev root=UUID=rootfs-uuid rw rootflags=prjquota\n"; out.String() != want {
		t.Errorf("rootmap printed %q, want %q", &out, want)
	}

	// A root device of a kind rdcore does not know is an error.
	f = stackTools(rootMount)
	f.out["lsblk --pairs --paths --output NAME,TYPE --nodeps /dev/mapper/root"] = `NAME="/dev/mapper/root" TYPE="lvm"` + "\n"
	if err := rdcoreRootmap(context.Background(), rdEnv{f, root}, p, &out, &errb); err == nil || err.Error() != "unknown block device type lvm" {
		t.Errorf("rdcoreRootmap on LVM = %v, want unknown block device type lvm", err)
	}
}

// --boot-device: the device mounted for the edit and unmounted after,
// as coreos-kargs.sh's second call (--boot-device /dev/disk/by-label/boot).
func TestRdcoreKargsBootDevice(t *testing.T) {
	f := &fakeDisks{
		esps:    map[string]map[string]string{"/dev/disk/by-label/boot": {"loader/entries/a.conf": "title A\noptions root=UUID=x\n"}},
		mounted: map[string]string{},
	}
	p, err := rdcoreCommand().Parse([]string{"kargs", "--boot-device", "/dev/disk/by-label/boot", "--append", "quiet"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rdcoreKargs(context.Background(), f, p, &out); err != nil {
		t.Fatalf("rdcoreKargs = %v", err)
	}
	if got := f.esps["/dev/disk/by-label/boot"]["loader/entries/a.conf"]; got != "title A\noptions root=UUID=x quiet\n" || f.unmounts != 1 || len(f.mounted) != 0 {
		t.Errorf("entry on the device = %q, unmounts %d; want quiet appended and one unmount", got, f.unmounts)
	}
	if out.String() != "root=UUID=x quiet\n" {
		t.Errorf("printed %q, want the new line", &out)
	}
}
