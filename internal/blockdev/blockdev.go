// Package blockdev is the kernel's view of block devices, read from sysfs
// and /proc: where a /dev path (a /dev/disk/by-* symlink included) leads,
// a device's size, sector size and partitions as the kernel knows them,
// what holds it (RAID arrays, device-mapper targets such as open LUKS
// volumes) and where it is mounted. It only reads files; the commands that
// change devices go through package sys.
//
// Sizes and starts here are in 512-byte units, as the kernel reports them
// in /sys/class/block/<dev>/{size,start} whatever the logical sector size.
//
// Family: target-side libraries (internal/README.md).
package blockdev

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// PartitionNode is the node of partition n of the disk whose node is disk,
// as the kernel names partitions (block/partitions/core.c): a "p" between
// a disk name ending in a digit and the number ("/dev/nvme0n1p2",
// "/dev/vdb1").
func PartitionNode(disk string, n int) string {
	if c := disk[len(disk)-1]; c >= '0' && c <= '9' {
		return disk + "p" + strconv.Itoa(n)
	}
	return disk + strconv.Itoa(n)
}

// ErrNotBlockDevice means a path exists but is not a block device node.
var ErrNotBlockDevice = errors.New("not a block device")

// Kernel reads the kernel's view. The zero value reads the real /sys and
// /proc; tests point the fields at a tree of their own.
type Kernel struct {
	// SysDir is where sysfs is mounted ("" means /sys).
	SysDir string
	// MountInfo is the mount table ("" means /proc/self/mountinfo).
	MountInfo string
	// DevDir is where device nodes live ("" means /dev); only the
	// mapping from node paths to sysfs names uses it.
	DevDir string
	// AnyNode accepts files that are not device nodes, for tests.
	AnyNode bool
	// Stat is os.Stat when nil; tests make chosen files device nodes.
	Stat func(string) (fs.FileInfo, error)
}

func (k Kernel) stat(path string) (fs.FileInfo, error) {
	if k.Stat != nil {
		return k.Stat(path)
	}
	return os.Stat(path)
}

func (k Kernel) sys(parts ...string) string {
	return filepath.Join(append([]string{cmp.Or(k.SysDir, "/sys"), "class", "block"}, parts...)...)
}

// Device is one block device, a whole disk or a partition.
type Device struct {
	// Path is the canonical node, /dev/<name> (symlinks resolved).
	Path string
	// Name is the kernel's name, as in /sys/class/block/<name>.
	Name string
	// MajorMinor is "major:minor", as mountinfo names devices.
	MajorMinor string
	// Size is in 512-byte units.
	Size int64
	// Partition is the partition's number, 0 for a whole disk.
	Partition int
	// Start is a partition's first sector, in 512-byte units.
	Start int64
	// Holders are the kernel names of the devices built on this one
	// (md0, dm-0), from /sys/class/block/<name>/holders.
	Holders []string
}

// Resolve follows path's symlinks (as /dev/disk/by-label/root is one) to
// the device node. A path that does not exist yet returns an error
// wrapping fs.ErrNotExist, so callers can wait for it.
func (k Kernel) Resolve(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	fi, err := k.stat(real)
	if err != nil {
		return "", err
	}
	if !k.AnyNode && (fi.Mode()&fs.ModeDevice == 0 || fi.Mode()&fs.ModeCharDevice != 0) {
		return "", fmt.Errorf("%s: %w", path, ErrNotBlockDevice)
	}
	return real, nil
}

// name is the sysfs name of a canonical node path: the path under /dev
// with "/" as "!" (/dev/cciss/c0d0 is cciss!c0d0).
func (k Kernel) name(node string) string {
	dev := cmp.Or(k.DevDir, "/dev")
	if rel, err := filepath.Rel(dev, node); err == nil && !strings.HasPrefix(rel, "..") {
		return strings.ReplaceAll(rel, "/", "!")
	}
	return filepath.Base(node)
}

// Device reads what the kernel knows of the device at the canonical node
// path.
func (k Kernel) Device(node string) (Device, error) {
	return k.device(k.name(node), node)
}

func (k Kernel) device(name, node string) (Device, error) {
	d := Device{Path: node, Name: name}
	if d.Path == "" {
		d.Path = filepath.Join(cmp.Or(k.DevDir, "/dev"), strings.ReplaceAll(name, "!", "/"))
	}
	mm, err := k.read(name, "dev")
	if err != nil {
		return d, err
	}
	d.MajorMinor = mm
	if d.Size, err = k.readInt(name, "size"); err != nil {
		return d, err
	}
	if _, err := os.Stat(k.sys(name, "partition")); err == nil {
		n, err := k.readInt(name, "partition")
		if err != nil {
			return d, err
		}
		d.Partition = int(n)
		if d.Start, err = k.readInt(name, "start"); err != nil {
			return d, err
		}
	}
	entries, err := os.ReadDir(k.sys(name, "holders"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d, fmt.Errorf("block device %s: %w", name, err)
	}
	for _, e := range entries {
		d.Holders = append(d.Holders, e.Name())
	}
	return d, nil
}

// LogicalBlockSize is a whole disk's logical sector size in bytes
// (/sys/class/block/<disk>/queue/logical_block_size).
func (k Kernel) LogicalBlockSize(disk Device) (int, error) {
	n, err := k.readInt(disk.Name, "queue", "logical_block_size")
	return int(n), err
}

// Partitions lists the partitions the kernel knows on a whole disk, by
// number. It is the kernel's view, which lags the partition table until
// someone tells the kernel (partx, BLKRRPART).
func (k Kernel) Partitions(disk Device) ([]Device, error) {
	entries, err := os.ReadDir(k.sys(disk.Name))
	if err != nil {
		return nil, fmt.Errorf("block device %s: %w", disk.Name, err)
	}
	var parts []Device
	for _, e := range entries {
		if _, err := os.Stat(k.sys(disk.Name, e.Name(), "partition")); err != nil {
			continue
		}
		p, err := k.device(e.Name(), "")
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while we looked
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
	return parts, nil
}

// MapperNode is /dev/mapper/<name> for the canonical node /dev/dm-N of a
// device-mapper device, as util-linux names it (lib/canonicalize.c,
// canonicalize_dm_name: the first line of /sys/block/dm-N/dm/name less
// its last byte, the newline the kernel ends it with, when that node
// exists), or "" for any other node, or when the name or its node is
// missing.
func (k Kernel) MapperNode(node string) string {
	base := filepath.Base(node)
	if !strings.HasPrefix(base, "dm-") || len(base) < 4 || base[3] < '0' || base[3] > '9' {
		return ""
	}
	raw, err := os.ReadFile(k.sys(base, "dm", "name"))
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(raw, '\n'); i >= 0 {
		raw = raw[:i+1]
	}
	if len(raw) <= 1 {
		return ""
	}
	p := filepath.Join(cmp.Or(k.DevDir, "/dev"), "mapper", string(raw[:len(raw)-1]))
	if _, err := k.stat(p); err != nil {
		return ""
	}
	return p
}

// DescribeHolder says what a holder is: "RAID array /dev/md0", "open LUKS
// volume root" (a device-mapper target whose uuid starts with CRYPT-),
// "device-mapper device vg-lv", or "/dev/<name>".
func (k Kernel) DescribeHolder(name string) string {
	if strings.HasPrefix(name, "md") {
		return "RAID array /dev/" + name
	}
	if strings.HasPrefix(name, "dm-") {
		dmName, _ := k.read(name, "dm", "name")
		uuid, _ := k.read(name, "dm", "uuid")
		if strings.HasPrefix(uuid, "CRYPT-") && dmName != "" {
			return "open LUKS volume " + dmName
		}
		if dmName != "" {
			return "device-mapper device " + dmName
		}
	}
	return "/dev/" + strings.ReplaceAll(name, "!", "/")
}

// Mounts maps "major:minor" to the mount points of that device, from the
// mount table (proc(5), /proc/self/mountinfo).
func (k Kernel) Mounts() (map[string][]string, error) {
	path := cmp.Or(k.MountInfo, "/proc/self/mountinfo")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	return ParseMountInfo(raw)
}

// ParseMountInfo reads mountinfo lines: "36 35 98:0 /mnt1 /mnt2 rw ... -
// ext3 /dev/root rw"; the third field is the device, the fifth the mount
// point (with spaces and the like octal-escaped).
func ParseMountInfo(raw []byte) (map[string][]string, error) {
	mounts := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 5 || !strings.Contains(f[2], ":") {
			return nil, fmt.Errorf("mountinfo line %d: %q is not a mount", n, sc.Text())
		}
		mounts[f[2]] = append(mounts[f[2]], UnescapeOctal(f[4]))
	}
	return mounts, sc.Err()
}

// UnescapeOctal undoes the kernel's \040-style escapes of paths in
// /proc files (mountinfo, swaps: space, tab, newline and backslash).
func UnescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UdevDB is where udev keeps its database of the devices it processed.
const UdevDB = "/run/udev/data"

// UdevProcessed reports whether udev has processed the block device
// majorMinor ("8:16"): it wrote its entry, b<major>:<minor>, in the
// database directory db (UdevDB), as it does at the end of every event of
// a block device (systemd src/libsystemd/sd-device/device-private.c,
// device_update_db). systemd then marks the device's .device unit active,
// unless udev's rules said it is not ready yet (SYSTEMD_READY=0: an md
// array not started, a dm device not resumed).
func UdevProcessed(db, majorMinor string) bool {
	_, err := os.Stat(filepath.Join(db, "b"+majorMinor))
	return err == nil
}

// UdevDBPresent reports whether the database directory db exists, so that
// UdevProcessed can tell anything.
func UdevDBPresent(db string) bool {
	fi, err := os.Stat(db)
	return err == nil && fi.IsDir()
}

// UdevRunning reports whether udev runs on this machine (its control
// socket exists), so that waiting for it means something. The blackbox
// hosts and some containers have none.
func UdevRunning() bool {
	_, err := os.Stat("/run/udev/control")
	return err == nil
}

func (k Kernel) read(name string, attr ...string) (string, error) {
	raw, err := os.ReadFile(k.sys(append([]string{name}, attr...)...))
	if err != nil {
		return "", fmt.Errorf("block device %s: %w", name, err)
	}
	return strings.TrimSpace(string(raw)), nil
}

func (k Kernel) readInt(name string, attr ...string) (int64, error) {
	s, err := k.read(name, attr...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("block device %s: %s: %w", name, strings.Join(attr, "/"), err)
	}
	return n, nil
}
