//go:build linux

package blackbox

// The declarative disk cases' shape and their runner. A case is data (see
// diskCase); runDiskCase builds the "before" disks on loop devices with
// sgdisk and mkfs directly, runs `flint run -stage fetch-offline` and then
// `-stage disks` on the case's config, and reads the result back with
// sfdisk --json, sysfs and blkid -p, mounting read-only to check files.
//
// The host has no udev (a container, the CI runner), so nothing here waits
// for `udevadm settle`: partition nodes come from devtmpfs once the kernel
// knows the partitions, and the runner polls for them with a timeout.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
)

// diskCase is one blackbox case for the disks stage: the disks before, a
// config, and either the disks after or the error the run must fail with.
type diskCase struct {
	// Name is the name of the matching case in Ignition's blackbox suite
	// (coreos/ignition tests/positive, tests/negative) where there is one,
	// else a name in the same style.
	Name string
	// In are the disks before the run, attached in order as $DISK0, $DISK1…
	In []disk
	// Config is the config JSON with the placeholders $VERSION (the spec
	// version the subtest runs) and $DISK0, $DISK1… (the loop devices;
	// "$DISK0p1" is the first partition of the first disk).
	Config string
	// MinVersion is the spec version that introduced the newest feature the
	// config uses; the zero value means 3.0.0.
	MinVersion config.Version
	// AllVersions runs the case for every supported version from
	// MinVersion. Without it the case runs for MinVersion and the newest
	// version only, which keeps the tier within its time budget: the
	// stage sees the same upgraded config for every version, so the middle
	// versions only re-test the config upgrade, which the representative
	// cases (AllVersions) and the unit tier cover.
	AllVersions bool
	// Out are the disks after a successful run, in the order of In. Give
	// either Out or WantFail.
	Out []disk
	// Needs lists what the host must offer beyond the partitioning and
	// mkfs tools: "md" (the kernel's RAID and mdadm), "dm" (device-mapper
	// with dm-crypt, and cryptsetup), "tang" (clevis and a tang server,
	// started on 127.0.0.1 for the case: $TANG is its URL, $THP its
	// signing key's thumbprint), "tpm2" (a TPM and clevis's tpm2 pin).
	// Without them the case is skipped, saying which is missing.
	Needs []string
	// WriteOK, with WantFail, lets the failed stage leave the disks
	// changed: the failure is one only writing can find (mkfs refusing
	// its options). Everything of In is still checked when not set.
	WriteOK bool
	// Check, when set, runs after a successful stage, before the cleanup
	// stops the case's arrays and closes its LUKS volumes: checks of what
	// sfdisk and blkid cannot see (the arrays, the open volumes, the
	// state the stage left). m is the machine flint ran in.
	Check func(t *testing.T, p *preparedCase)
	// WantFail is a substring of the error the disks stage must fail with,
	// with the same placeholders as Config.
	// The disks must then be unchanged: sfdisk --json, the kernel's view
	// of the partitions and blkid -p of every node read exactly as before,
	// and every file of In is still there.
	WantFail string
}

// disk is a disk image, before or after.
type disk struct {
	// SizeMiB is the image's size (In only; the image is sparse).
	SizeMiB int64
	// SectorSize is the logical sector size; 0 means 512.
	SectorSize int64
	// GrowToMiB, In only, grows the image to this size after the before
	// state is written (truncate, then losetup -c), as a cloud disk grows
	// under an installed image: the backup GPT is no longer at the end.
	GrowToMiB int64
	// Table is the partition table: "gpt", "dos", or "none" for a blank
	// disk. "" means gpt when Partitions is not empty, else none. In Out,
	// "" checks nothing but the partitions.
	Table string
	// Partitions are the GPT partitions. In Out they are compared
	// exactly: the same numbers, and each given field equal.
	Partitions []partition
}

// partition is one GPT partition. Start and size are given in MiB or, for
// exact sector arithmetic, in logical sectors; 0 in In means sgdisk's
// default (first free sector / fill), 0 in Out means not checked.
type partition struct {
	Number            int
	StartMiB, SizeMiB int64
	Start, Size       int64 // in logical sectors, used when the MiB field is 0
	Label             string
	TypeGUID, GUID    string
	// FS is the filesystem on the partition: In makes it with mkfs; Out
	// compares blkid's TYPE (and LABEL, UUID where given) and the files.
	// nil in Out checks nothing.
	FS *filesystem
	// Mounted, In only, keeps the partition mounted (read-only) while the
	// stage runs: it is in use.
	Mounted bool
}

// filesystem is a filesystem on a partition.
type filesystem struct {
	// Format is ext4, xfs, btrfs, vfat or swap; in Out, "none" means blkid
	// must find no signature at all. In also makes "luks1" and "luks2"
	// volumes (cryptsetup luksFormat, key blackboxKey, cheap PBKDF2),
	// which blkid reports as crypto_LUKS: Out gives that, with Version.
	Format string
	// Version, Out only, is blkid's VERSION (2 for LUKS2).
	Version string
	Label   string
	// UUID as blkid prints it (vfat: "ABCD-1234").
	UUID string
	// Files are paths in the filesystem and their contents: In writes
	// them, Out checks them. Only formats the kernel here can mount.
	Files map[string]string
	// Gone, Out only, are paths that must not exist (the filesystem was
	// recreated).
	Gone []string
}

// Well-known GPT partition types, as sfdisk prints them.
const (
	typeLinux = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
	typeESP   = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	typeSwap  = "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"
	typeRoot  = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709" // root (x86-64)
)

// lastUsable is the last sector a partition may use on a disk of sizeMiB
// with a GPT at its end: the backup header and its 128 entries take 33
// sectors of 512 bytes, or 5 of 4096 (sgdisk, 16 KiB of entries).
func lastUsable(sizeMiB, sectorSize int64) int64 {
	if sectorSize == 0 {
		sectorSize = 512
	}
	total := sizeMiB << 20 / sectorSize
	return total - 1 - 1 - (16384+sectorSize-1)/sectorSize
}

// fillFrom is the size in sectors of a partition from start to the end of
// a disk of sizeMiB (sizeMiB: 0 in a config).
func fillFrom(start, sizeMiB, sectorSize int64) int64 {
	return lastUsable(sizeMiB, sectorSize) - start + 1
}

// firstUsable is the first sector a partition may use after sgdisk's
// primary GPT (the protective MBR, the header and 16 KiB of entries).
func firstUsable(sectorSize int64) int64 {
	return 2 + (16384+sectorSize-1)/sectorSize
}

// inSectors returns the partitions of an In disk with every start and
// size in sectors: a start of 0 is the end of the partition listed before
// it (or 1 MiB), rounded up to 1 MiB; a size of 0 fills to the last usable
// sector, as sgdisk's would.
func (d disk) inSectors(ss int64) []partition {
	perMiB := int64(1<<20) / ss
	next := perMiB
	parts := make([]partition, len(d.Partitions))
	for i, p := range d.Partitions {
		start, size := p.sectors(ss)
		if start == 0 {
			start = (next + perMiB - 1) / perMiB * perMiB
		}
		if size == 0 {
			size = lastUsable(d.SizeMiB, ss) - start + 1
		}
		p.Start, p.Size, p.StartMiB, p.SizeMiB = start, size, 0, 0
		parts[i] = p
		next = start + size
	}
	return parts
}

func (d disk) sectorSize() int64 {
	if d.SectorSize == 0 {
		return 512
	}
	return d.SectorSize
}

func (d disk) table() string {
	switch {
	case d.Table != "":
		return d.Table
	case len(d.Partitions) > 0:
		return "gpt"
	}
	return "none"
}

// sectors returns the partition's start and size in logical sectors.
func (p partition) sectors(ss int64) (start, size int64) {
	start, size = p.Start, p.Size
	if p.StartMiB != 0 {
		start = p.StartMiB << 20 / ss
	}
	if p.SizeMiB != 0 {
		size = p.SizeMiB << 20 / ss
	}
	return start, size
}

// versions are the spec versions the case runs for, oldest first.
func (c diskCase) versions() []config.Version {
	min := c.MinVersion
	if min == (config.Version{}) {
		min = config.V3_0
	}
	var vs []config.Version
	for _, v := range config.SupportedVersions {
		if v.AtLeast(min) {
			vs = append(vs, v)
		}
	}
	if c.AllVersions || len(vs) <= 2 {
		return vs
	}
	return []config.Version{vs[0], vs[len(vs)-1]}
}

// The tools the runner itself needs; a host without them skips the tier.
var diskTools = []string{"losetup", "partx", "sgdisk", "sfdisk", "blkid", "mount", "umount", "truncate",
	"mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkswap", "wipefs"}

// requireDisks skips the test unless it can attach loop devices and run
// the partitioning and mkfs tools.
func requireDisks(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the disk cases need root: they attach loop devices, partition and format them " +
			"(run `make blackbox` or `go test ./tests/blackbox/...` as root)")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("the disk cases need loop devices: %v", err)
	}
	var missing []string
	for _, tool := range diskTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Skipf("the disk cases need %s (util-linux, gdisk, e2fsprogs, xfsprogs, btrfs-progs, dosfstools): not found in PATH",
			strings.Join(missing, ", "))
	}
}

// sh runs a command with a time limit and returns its stdout, failing the
// test (with stderr) when it fails.
func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, errOut, err := shTry(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// shTry runs a command with a time limit and returns stdout, stderr and
// the error.
func shTry(name string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// loopDisk is one attached image.
type loopDisk struct {
	image, dev string
	ss         int64
}

// partNode is partition n's device node: /dev/loop3p2.
func (l loopDisk) partNode(n int) string { return fmt.Sprintf("%sp%d", l.dev, n) }

// sysName is the disk's name in /sys/class/block.
func (l loopDisk) sysName() string { return filepath.Base(l.dev) }

// attach creates a sparse image of sizeMiB and attaches it to a free loop
// device with partition scanning. The cleanup removes the kernel's
// partitions and detaches the device; it touches nothing else.
func attach(t *testing.T, dir string, i int, sizeMiB, ss int64) loopDisk {
	t.Helper()
	image := filepath.Join(dir, fmt.Sprintf("disk%d.img", i))
	f, err := os.Create(image)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(sizeMiB << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := []string{"-f", "--show", "-P"}
	if ss != 512 {
		args = append(args, "--sector-size", strconv.FormatInt(ss, 10))
	}
	out, errOut, err := shTry("losetup", append(args, image)...)
	if err != nil && ss != 512 {
		t.Skipf("losetup cannot attach with %d-byte logical sectors here: %v: %s", ss, err, errOut)
	}
	if err != nil {
		t.Fatalf("losetup %s: %v: %s", strings.Join(args, " "), err, errOut)
	}
	dev := strings.TrimSpace(out)
	if !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("losetup printed %q, not a loop device", dev)
	}
	t.Cleanup(func() {
		// Partitions first, so nothing holds the device; then detach it.
		// Only this device, which this test attached.
		shTry("partx", "-d", dev)
		if _, errOut, err := shTry("losetup", "-d", dev); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, errOut)
		}
	})
	return loopDisk{image: image, dev: dev, ss: ss}
}

// rescan makes the kernel see the table now on the disk (sgdisk asks the
// kernel to re-read it, which does not always take; partx -a adds what is
// missing, partx -u updates what changed) and waits for the nodes of want.
func rescan(t *testing.T, l loopDisk, want []int) {
	t.Helper()
	shTry("partx", "-a", l.dev)
	shTry("partx", "-u", l.dev)
	waitNodes(t, l, want)
}

// waitNodes polls for the partition nodes, as there is no udev to settle.
func waitNodes(t *testing.T, l loopDisk, want []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, n := range want {
		for {
			_, err := os.Stat(l.partNode(n))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("partition node %s did not appear within 10s (kernel partitions: %v)", l.partNode(n), kernelParts(l))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// kernelPart is a partition as the kernel sees it, in logical sectors.
type kernelPart struct{ Start, Size int64 }

// kernelParts reads the kernel's partitions of the disk from sysfs (which
// counts in 512-byte units).
func kernelParts(l loopDisk) map[int]kernelPart {
	parts := map[int]kernelPart{}
	base := filepath.Join("/sys/class/block", l.sysName())
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), l.sysName()+"p")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			continue
		}
		start := readInt(filepath.Join(base, e.Name(), "start"))
		size := readInt(filepath.Join(base, e.Name(), "size"))
		parts[n] = kernelPart{start * 512 / l.ss, size * 512 / l.ss}
	}
	return parts
}

func readInt(path string) int64 {
	b, _ := os.ReadFile(path)
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// buildDisk writes the before state of d onto the attached disk.
func buildDisk(t *testing.T, dir string, l loopDisk, d disk) {
	t.Helper()
	switch d.table() {
	case "none":
	case "dos":
		cmd := exec.Command("sfdisk", "--quiet", l.dev)
		cmd.Stdin = strings.NewReader("label: dos\nstart=2048, size=16384, type=83\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sfdisk (dos label) %s: %v\n%s", l.dev, err, out)
		}
		rescan(t, l, []int{1})
	case "gpt":
		// sfdisk, not sgdisk: sgdisk sleeps a second after every write.
		// The header's usable range is sgdisk's, so the disk reads as one
		// sgdisk made; every start and size is explicit (see sectors).
		var script strings.Builder
		fmt.Fprintf(&script, "label: gpt\nfirst-lba: %d\nlast-lba: %d\n",
			firstUsable(l.ss), lastUsable(d.SizeMiB, l.ss))
		var nums []int
		for _, p := range d.inSectors(l.ss) {
			fmt.Fprintf(&script, "%s : start=%d, size=%d", l.partNode(p.Number), p.Start, p.Size)
			typ := p.TypeGUID
			if typ == "" {
				typ = typeLinux
			}
			fmt.Fprintf(&script, ", type=%s", typ)
			if p.GUID != "" {
				fmt.Fprintf(&script, ", uuid=%s", p.GUID)
			}
			if p.Label != "" {
				fmt.Fprintf(&script, ", name=%q", p.Label)
			}
			script.WriteString("\n")
			nums = append(nums, p.Number)
		}
		cmd := exec.Command("sfdisk", "--quiet", "--no-reread", l.dev)
		cmd.Stdin = strings.NewReader(script.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sfdisk %s: %v\n%s\nscript:\n%s", l.dev, err, out, script.String())
		}
		rescan(t, l, nums)
	default:
		t.Fatalf("unknown table %q", d.Table)
	}
	for _, p := range d.Partitions {
		if p.FS != nil {
			mkfs(t, dir, l.partNode(p.Number), *p.FS)
		}
	}
	if d.GrowToMiB != 0 {
		if err := os.Truncate(l.image, d.GrowToMiB<<20); err != nil {
			t.Fatal(err)
		}
		sh(t, "losetup", "-c", l.dev)
	}
}

// mkfs makes fs on node and writes its files.
func mkfs(t *testing.T, dir, node string, fs filesystem) {
	t.Helper()
	var name string
	var args []string
	switch fs.Format {
	case "ext4":
		name, args = "mkfs.ext4", []string{"-F", "-q"}
		if fs.Label != "" {
			args = append(args, "-L", fs.Label)
		}
		if fs.UUID != "" {
			args = append(args, "-U", fs.UUID)
		}
	case "xfs":
		name, args = "mkfs.xfs", []string{"-f", "-q"}
		if fs.Label != "" {
			args = append(args, "-L", fs.Label)
		}
		if fs.UUID != "" {
			args = append(args, "-m", "uuid="+fs.UUID)
		}
	case "btrfs":
		name, args = "mkfs.btrfs", []string{"-f", "-q"}
		if fs.Label != "" {
			args = append(args, "-L", fs.Label)
		}
		if fs.UUID != "" {
			args = append(args, "-U", fs.UUID)
		}
	case "vfat":
		name = "mkfs.vfat"
		if fs.Label != "" {
			args = append(args, "-n", fs.Label)
		}
		if fs.UUID != "" {
			args = append(args, "-i", strings.ReplaceAll(fs.UUID, "-", ""))
		}
	case "swap":
		name, args = "mkswap", []string{"-f"}
		if fs.Label != "" {
			args = append(args, "-L", fs.Label)
		}
		if fs.UUID != "" {
			args = append(args, "-U", fs.UUID)
		}
	case "luks1", "luks2":
		key := filepath.Join(dir, "blackbox.key")
		if err := os.WriteFile(key, []byte(blackboxKey), 0o400); err != nil {
			t.Fatal(err)
		}
		name, args = "cryptsetup", []string{"luksFormat", "--batch-mode", "--type", fs.Format, "--key-file", key,
			"--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"}
		if fs.Label != "" {
			args = append(args, "--label", fs.Label)
		}
		if fs.UUID != "" {
			args = append(args, "--uuid", fs.UUID)
		}
	default:
		t.Fatalf("mkfs: unknown format %q", fs.Format)
	}
	sh(t, name, append(args, node)...)
	if len(fs.Files) == 0 {
		return
	}
	mnt := mountDir(t, dir, node, fs.Format, false)
	for path, body := range fs.Files {
		full := filepath.Join(mnt, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unmount(t, mnt)
}

// mountDir mounts node (of format) on a fresh dir under dir; the cleanup
// unmounts it if the test stops before unmount does.
func mountDir(t *testing.T, dir, node, format string, readOnly bool) string {
	t.Helper()
	if !kernelMounts(format) {
		t.Fatalf("case error: files on %s, which this kernel cannot mount (/proc/filesystems); put them on ext4, xfs or btrfs", format)
	}
	mnt, err := os.MkdirTemp(dir, "mnt-")
	if err != nil {
		t.Fatal(err)
	}
	opts := "rw"
	if readOnly {
		opts = "ro"
	}
	sh(t, "mount", "-t", format, "-o", opts, node, mnt)
	t.Cleanup(func() { shTry("umount", mnt) })
	return mnt
}

func unmount(t *testing.T, mnt string) {
	t.Helper()
	sh(t, "umount", mnt)
}

// kernelMounts reports whether /proc/filesystems lists format.
func kernelMounts(format string) bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == format {
			return true
		}
	}
	return false
}

// snapshot is everything the runner can see of a disk without mounting:
// the table as sfdisk prints it, the kernel's partitions, and blkid -p of
// the disk and of every partition node. A failed run must leave it equal.
func snapshot(t *testing.T, l loopDisk) string {
	t.Helper()
	var b strings.Builder
	out, errOut, err := shTry("sfdisk", "--json", l.dev)
	fmt.Fprintf(&b, "sfdisk --json %s (%v):\n%s%s\n", l.dev, err, out, errOut)
	kp := kernelParts(l)
	nums := make([]int, 0, len(kp))
	for n := range kp {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	fmt.Fprintf(&b, "kernel partitions:")
	for _, n := range nums {
		fmt.Fprintf(&b, " %d:%d+%d", n, kp[n].Start, kp[n].Size)
	}
	b.WriteString("\n")
	for _, node := range append([]string{l.dev}, nodesOf(l, nums)...) {
		out, errOut, err := shTry("blkid", "-p", "-o", "export", node)
		fmt.Fprintf(&b, "blkid -p %s (%v):\n%s%s\n", node, err, out, errOut)
	}
	return b.String()
}

func nodesOf(l loopDisk, nums []int) []string {
	var nodes []string
	for _, n := range nums {
		nodes = append(nodes, l.partNode(n))
	}
	return nodes
}

// sfdiskTable is the part of `sfdisk --json` the checks read.
type sfdiskTable struct {
	PartitionTable struct {
		Label      string `json:"label"`
		SectorSize int64  `json:"sectorsize"`
		LastLBA    int64  `json:"lastlba"`
		Partitions []struct {
			Node  string `json:"node"`
			Start int64  `json:"start"`
			Size  int64  `json:"size"`
			Type  string `json:"type"`
			UUID  string `json:"uuid"`
			Name  string `json:"name"`
		} `json:"partitions"`
	} `json:"partitiontable"`
}

var trailingNumber = regexp.MustCompile(`p(\d+)$`)

// readTable reads the disk's partition table; table is "" without one.
func readTable(t *testing.T, l loopDisk) (table string, parts map[int]partition, lastLBA int64) {
	t.Helper()
	out, errOut, err := shTry("sfdisk", "--json", l.dev)
	if err != nil {
		if strings.Contains(errOut, "does not contain a recognized partition table") {
			return "", nil, 0
		}
		t.Fatalf("sfdisk --json %s: %v: %s", l.dev, err, errOut)
	}
	var st sfdiskTable
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("sfdisk --json %s: %v\n%s", l.dev, err, out)
	}
	parts = map[int]partition{}
	for _, p := range st.PartitionTable.Partitions {
		m := trailingNumber.FindStringSubmatch(p.Node)
		if m == nil {
			t.Fatalf("sfdisk --json %s: partition node %q has no number", l.dev, p.Node)
		}
		n, _ := strconv.Atoi(m[1])
		parts[n] = partition{Number: n, Start: p.Start, Size: p.Size, Label: p.Name, TypeGUID: p.Type, GUID: p.UUID}
	}
	return st.PartitionTable.Label, parts, st.PartitionTable.LastLBA
}

// blkid probes node and returns its TYPE, LABEL and UUID ("" when blkid
// finds nothing).
func blkid(t *testing.T, node string) map[string]string {
	t.Helper()
	out, errOut, err := shTry("blkid", "-p", "-o", "export", node)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 2) { // 2: nothing found
		t.Fatalf("blkid -p %s: %v: %s", node, err, errOut)
	}
	vals := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vals[k] = v
		}
	}
	return vals
}

// checkDisk compares the disk with want and reports every difference.
func checkDisk(t *testing.T, dir string, l loopDisk, i int, want disk) {
	t.Helper()
	failed := false
	errorf := func(format string, args ...any) {
		t.Helper()
		failed = true
		t.Errorf(format, args...)
	}
	table, parts, _ := readTable(t, l)
	wantTable := want.Table
	if wantTable == "" && len(want.Partitions) > 0 {
		wantTable = "gpt"
	}
	if wantTable == "none" {
		wantTable = ""
	}
	if wantTable != "" && table != wantTable || want.Table == "none" && table != "" {
		errorf("$DISK%d: partition table %q, want %q", i, table, wantTable)
	}
	var got, exp []int
	for n := range parts {
		got = append(got, n)
	}
	for _, p := range want.Partitions {
		exp = append(exp, p.Number)
	}
	sort.Ints(got)
	sort.Ints(exp)
	if !slices.Equal(got, exp) {
		errorf("$DISK%d: partitions %v, want %v", i, got, exp)
	}
	kp := kernelParts(l)
	for _, w := range want.Partitions {
		g, ok := parts[w.Number]
		if !ok {
			continue
		}
		name := fmt.Sprintf("$DISK%dp%d", i, w.Number)
		start, size := w.sectors(l.ss)
		if start != 0 && g.Start != start {
			errorf("%s: start sector %d, want %d", name, g.Start, start)
		}
		if size != 0 && g.Size != size {
			errorf("%s: size %d sectors, want %d", name, g.Size, size)
		}
		if w.Label != "" && g.Label != w.Label {
			errorf("%s: label %q, want %q", name, g.Label, w.Label)
		}
		if w.TypeGUID != "" && !strings.EqualFold(g.TypeGUID, w.TypeGUID) {
			errorf("%s: type GUID %s, want %s", name, g.TypeGUID, w.TypeGUID)
		}
		if w.GUID != "" && !strings.EqualFold(g.GUID, w.GUID) {
			errorf("%s: GUID %s, want %s", name, g.GUID, w.GUID)
		}
		// The kernel must see what the table says: the next stages use
		// the partition nodes.
		if k, ok := kp[w.Number]; !ok || k.Start != g.Start || k.Size != g.Size {
			errorf("%s: the kernel sees %+v (present %v), the table says start %d size %d", name, k, ok, g.Start, g.Size)
		}
	}
	for n := range kp {
		if _, ok := parts[n]; !ok {
			errorf("$DISK%d: the kernel still has partition %d, which the table does not", i, n)
		}
	}
	if failed {
		return // the filesystems' nodes may be missing
	}
	waitNodes(t, l, exp)
	for _, w := range want.Partitions {
		if w.FS != nil {
			checkFS(t, dir, l.partNode(w.Number), fmt.Sprintf("$DISK%dp%d", i, w.Number), *w.FS)
		}
	}
}

// checkFS compares the filesystem on node with want.
func checkFS(t *testing.T, dir, node, name string, want filesystem) {
	t.Helper()
	got := blkid(t, node)
	if want.Format == "none" {
		if got["TYPE"] != "" {
			t.Errorf("%s: blkid finds %s (%v), want no signature", name, got["TYPE"], got)
		}
		return
	}
	if got["TYPE"] != want.Format {
		t.Errorf("%s: blkid TYPE %q, want %q", name, got["TYPE"], want.Format)
		return
	}
	if want.Label != "" && got["LABEL"] != want.Label {
		t.Errorf("%s: blkid LABEL %q, want %q", name, got["LABEL"], want.Label)
	}
	if want.UUID != "" && !strings.EqualFold(got["UUID"], want.UUID) {
		t.Errorf("%s: blkid UUID %q, want %q", name, got["UUID"], want.UUID)
	}
	if want.Version != "" && got["VERSION"] != want.Version {
		t.Errorf("%s: blkid VERSION %q, want %q", name, got["VERSION"], want.Version)
	}
	checkFiles(t, dir, node, name, want)
}

// checkFiles mounts node read-only and checks the files of want.
func checkFiles(t *testing.T, dir, node, name string, want filesystem) {
	t.Helper()
	if len(want.Files) == 0 && len(want.Gone) == 0 {
		return
	}
	mnt := mountDir(t, dir, node, want.Format, true)
	defer unmount(t, mnt)
	for path, body := range want.Files {
		b, err := os.ReadFile(filepath.Join(mnt, path))
		switch {
		case err != nil:
			t.Errorf("%s: %s: %v, want it kept", name, path, err)
		case string(b) != body:
			t.Errorf("%s: %s = %q, want %q", name, path, b, body)
		}
	}
	for _, path := range want.Gone {
		if _, err := os.Lstat(filepath.Join(mnt, path)); err == nil {
			t.Errorf("%s: %s exists, want it gone with the old filesystem", name, path)
		}
	}
}

// stageRun is the outcome of one `flint run`.
type stageRun struct {
	code int
	out  string
	err  error // flint did not run, or did not finish in time
}

// runStage runs one stage like machine.run, but kills it after d so a hung
// stage fails its case instead of the whole tier. It does not touch the
// test, so it may run in a goroutine.
func (m *machine) runStage(parent context.Context, stage string, d time.Duration) stageRun {
	ctx, cancel := context.WithTimeout(parent, d)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.bin, m.stageArgv(stage, "-device-timeout", deviceTimeout.String())...)
	cmd.Dir = m.path("work")
	cmd.Env = m.env
	out, err := cmd.CombinedOutput()
	r := stageRun{out: string(out)}
	var ee *exec.ExitError
	switch {
	case parent.Err() != nil:
		r.err = fmt.Errorf("flint run -stage %s: stopped: %w", stage, parent.Err())
	case ctx.Err() != nil:
		r.err = fmt.Errorf("flint run -stage %s did not finish within %v", stage, d)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.err = fmt.Errorf("running flint: %v", err)
	}
	return r
}

// deviceTimeout is the disks stage's wait for a device in the cases
// (-device-timeout): long enough for the partition nodes the stage makes,
// short enough for the cases whose device never comes.
const deviceTimeout = 5 * time.Second

// expand fills in the placeholders of a config template or an expected
// error.
func expand(tmpl string, v config.Version, disks []loopDisk) string {
	s := strings.ReplaceAll(tmpl, "$VERSION", v.String())
	for i := len(disks) - 1; i >= 0; i-- { // $DISK10 before $DISK1
		s = strings.ReplaceAll(s, fmt.Sprintf("$DISK%d", i), disks[i].dev)
	}
	return s
}

// preparedCase is a case whose disks are built and whose config is
// fetched, ready for the disks stage.
type preparedCase struct {
	c      diskCase
	v      config.Version
	dir    string
	disks  []loopDisk
	before []string // snapshot of each disk
	cfg    string
	m      *machine
	tang   tangServer
}

// prepare builds the case's disks and runs fetch-offline. Everything it
// attaches is detached in t's cleanup.
func prepare(t *testing.T, bin string, c diskCase, v config.Version) *preparedCase {
	t.Helper()
	p := &preparedCase{c: c, v: v, dir: t.TempDir()}
	requireFor(t, c.Needs)
	if slices.Contains(c.Needs, "tang") {
		p.tang = startTang(t)
	}
	p.disks = make([]loopDisk, len(c.In))
	for i, d := range c.In {
		p.disks[i] = attach(t, p.dir, i, d.SizeMiB, d.sectorSize())
		buildDisk(t, p.dir, p.disks[i], d)
	}
	for _, l := range p.disks {
		p.before = append(p.before, snapshot(t, l))
	}
	for i, d := range c.In {
		for _, part := range d.Partitions {
			if part.Mounted {
				mountDir(t, p.dir, p.disks[i].partNode(part.Number), part.FS.Format, true)
			}
		}
	}
	p.cfg = p.tang.expand(expand(c.Config, v, p.disks))
	// Registered after attach's cleanups, so it runs before them: the
	// arrays and volumes go before their disks.
	stopStorage(t, p.cfg)
	p.m = newMachine(t, bin, p.cfg)
	if r := p.m.runStage(context.Background(), "fetch-offline", time.Minute); r.err != nil || r.code != 0 {
		t.Fatalf("flint run -stage fetch-offline: exit %d (%v), want 0\nconfig:\n%s\n%s", r.code, r.err, p.cfg, r.out)
	}
	return p
}

// runDisks runs the disks stage; it may run in a goroutine.
func (p *preparedCase) runDisks(ctx context.Context) stageRun {
	return p.m.runStage(ctx, "disks", 3*time.Minute)
}

// runDiskCase runs one case at one spec version.
func runDiskCase(t *testing.T, bin string, c diskCase, v config.Version) {
	p := prepare(t, bin, c, v)
	p.check(t, p.runDisks(context.Background()))
}

// check compares the outcome of the disks stage with the case.
func (p *preparedCase) check(t *testing.T, r stageRun) {
	c, v, dir, disks, cfg := p.c, p.v, p.dir, p.disks, p.cfg
	if r.err != nil {
		t.Fatalf("%v\nconfig:\n%s\n%s", r.err, cfg, r.out)
	}
	code, out := r.code, r.out
	if strings.Contains(out, "panic") {
		t.Errorf("flint run -stage disks panicked:\n%s", out)
	}

	if c.WantFail != "" {
		wantFail := p.tang.expand(expand(c.WantFail, v, disks))
		if code == 0 || !strings.Contains(out, wantFail) {
			t.Errorf("flint run -stage disks: exit %d, want a failure containing %q\nconfig:\n%s\n%s", code, wantFail, cfg, out)
		}
		if c.WriteOK {
			return
		}
		for i, l := range disks {
			if after := snapshot(t, l); after != p.before[i] {
				t.Errorf("$DISK%d changed although the stage failed\nbefore:\n%s\nafter:\n%s", i, p.before[i], after)
			}
		}
		for i, d := range c.In {
			for _, part := range d.Partitions {
				if part.FS != nil && len(part.FS.Files) > 0 {
					checkFiles(t, dir, disks[i].partNode(part.Number), fmt.Sprintf("$DISK%dp%d", i, part.Number), *part.FS)
				}
			}
		}
		return
	}
	if code != 0 {
		t.Fatalf("flint run -stage disks: exit %d, want 0\nconfig:\n%s\n%s", code, cfg, out)
	}
	if len(c.Out) != len(c.In) {
		t.Fatalf("case error: %d disks in Out, %d in In", len(c.Out), len(c.In))
	}
	for i, want := range c.Out {
		checkDisk(t, dir, disks[i], i, want)
	}
	if c.Check != nil {
		c.Check(t, p)
	}
	if t.Failed() {
		t.Logf("config:\n%s\nflint run -stage disks:\n%s", cfg, out)
	}
}
