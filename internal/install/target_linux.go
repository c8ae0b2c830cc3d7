package install

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/gpt"
	"github.com/flintboot/flint/internal/sys"
)

// Mounter mounts and unmounts; sys.Mounter is the real one.
type Mounter interface {
	Mount(source, target, fstype string, flags uintptr, data string) error
	Unmount(target string) error
}

// BlockTarget is the real destination: a whole disk, checked through
// sysfs and the mount table and opened with O_EXCL, which the kernel
// refuses while anything mounts or holds the disk or its partitions.
type BlockTarget struct {
	Kernel  blockdev.Kernel
	Mounter Mounter
	// NodeTimeout is how long to wait for a partition's /dev node after
	// the table is reread (devtmpfs makes it; udev may rename around it).
	NodeTimeout time.Duration

	dev blockdev.Device
}

// Open implements Target.
func (t *BlockTarget) Open(dest string) (Disk, geometry, error) {
	node, err := t.Kernel.Resolve(dest)
	if err != nil {
		return nil, geometry{}, fmt.Errorf("destination %s: %w", dest, err)
	}
	dev, err := t.Kernel.Device(node)
	if err != nil {
		return nil, geometry{}, fmt.Errorf("destination %s: %w", dest, err)
	}
	if dev.Partition != 0 {
		return nil, geometry{}, fmt.Errorf("destination %s is partition %d of a disk; give the whole disk: %w", dest, dev.Partition, ErrNotWholeDisk)
	}
	if err := t.checkFree(dest, dev); err != nil {
		return nil, geometry{}, err
	}
	fd, err := unix.Open(node, unix.O_RDWR|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EBUSY) {
		return nil, geometry{}, fmt.Errorf("destination %s: the kernel says it is busy: %w", dest, ErrTargetBusy)
	}
	if err != nil {
		return nil, geometry{}, fmt.Errorf("destination %s: %w", dest, err)
	}
	f := os.NewFile(uintptr(fd), node)
	ss, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil {
		f.Close()
		return nil, geometry{}, fmt.Errorf("destination %s: sector size: %w", dest, err)
	}
	t.dev = dev
	d := &blockDisk{File: f}
	// A second descriptor for the image's bulk, with O_DIRECT; a device
	// that refuses it is written through the page cache.
	if dfd, err := unix.Open(node, unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0); err == nil {
		d.direct = os.NewFile(uintptr(dfd), node)
	}
	return d, geometry{SectorSize: int64(ss), Size: dev.Size * 512}, nil
}

// blockDisk is the open destination: the exclusive descriptor, and one
// with O_DIRECT for the image's bulk.
type blockDisk struct {
	*os.File
	direct *os.File
}

// WriteAtDirect implements directWriter.
func (d *blockDisk) WriteAtDirect(p []byte, off int64) (int, error) {
	if d.direct == nil {
		return d.WriteAt(p, off)
	}
	return d.direct.WriteAt(p, off)
}

// Close closes both descriptors.
func (d *blockDisk) Close() error {
	if d.direct != nil {
		d.direct.Close()
	}
	return d.File.Close()
}

// file is the descriptor ioctls go to.
func file(d Disk) (*os.File, bool) {
	switch d := d.(type) {
	case *blockDisk:
		return d.File, true
	case *os.File:
		return d, true
	}
	return nil, false
}

// checkFree refuses a disk that is mounted, swapped on, held (RAID,
// device-mapper) or holds the running system, naming every use found
// (coreos-installer, src/install.rs, ensure_exclusive_access).
func (t *BlockTarget) checkFree(dest string, dev blockdev.Device) error {
	parts, err := t.Kernel.Partitions(dev)
	if err != nil {
		return fmt.Errorf("destination %s: %w", dest, err)
	}
	mounts, err := t.Kernel.Mounts()
	if err != nil {
		return err
	}
	swaps, err := readSwaps("/proc/swaps")
	if err != nil {
		return err
	}
	var root unix.Stat_t
	rootDev := ""
	if unix.Stat("/", &root) == nil {
		rootDev = fmt.Sprintf("%d:%d", unix.Major(root.Dev), unix.Minor(root.Dev))
	}
	var uses []string
	for _, d := range append([]blockdev.Device{dev}, parts...) {
		if d.MajorMinor == rootDev {
			uses = append(uses, d.Path+" holds the running system's root filesystem")
		}
		for _, m := range mounts[d.MajorMinor] {
			uses = append(uses, d.Path+" is mounted on "+m)
		}
		if swaps[d.Path] {
			uses = append(uses, d.Path+" is a swap device")
		}
		for _, h := range d.Holders {
			uses = append(uses, d.Path+" is in use by "+t.Kernel.DescribeHolder(h))
		}
	}
	if len(uses) > 0 {
		return fmt.Errorf("destination %s: %s: %w", dest, strings.Join(uses, "; "), ErrTargetBusy)
	}
	return nil
}

// readSwaps reads the active swap devices from /proc/swaps (proc(5)): a
// header line, then the (octal-escaped) name first on each line.
func readSwaps(path string) (map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the swap table: %w", err)
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for i := 0; sc.Scan(); i++ {
		fields := strings.Fields(sc.Text())
		if i == 0 || len(fields) == 0 {
			continue
		}
		name := blockdev.UnescapeOctal(fields[0])
		if real, err := filepath.EvalSymlinks(name); err == nil {
			name = real
		}
		out[name] = true
	}
	return out, nil
}

// Reread implements Target: BLKRRPART, tried again for 2 s, as the ioctl
// sometimes fails for a moment after a write (coreos-installer,
// src/blockdev.rs, reread_partition_table). A kernel that does not read
// GPT itself (no CONFIG_EFI_PARTITION, as in some containers' hosts) then
// learns the partitions through BLKPG, as partx(8) does: the kernel's
// list is made to match the table on the disk.
func (t *BlockTarget) Reread(d Disk) error {
	f, ok := file(d)
	if !ok {
		return errors.New("rereading the partition table: not a device file")
	}
	// The kernel's side of the disk, through sys; f stays open (the
	// sys.Disk is not closed).
	kd := sys.DiskFromFile(f)
	var err error
	for range 20 {
		if err = kd.RereadPartitionTable(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	ss, err := unix.IoctlGetInt(int(f.Fd()), unix.BLKSSZGET)
	if err != nil {
		return fmt.Errorf("sector size of %s: %w", f.Name(), err)
	}
	want := map[int][2]int64{} // number: start, length in bytes
	if table, err := gpt.Read(d, ss, t.dev.Size*512/int64(ss)); err == nil {
		for i, e := range table.Entries {
			if e.Used() {
				want[i+1] = [2]int64{int64(e.First) * int64(ss), int64(e.Last-e.First+1) * int64(ss)}
			}
		}
	}
	have, err := t.Kernel.Partitions(t.dev)
	if err != nil {
		return err
	}
	for _, p := range have {
		w, ok := want[p.Partition]
		if ok && w[0] == p.Start*512 && w[1] == p.Size*512 {
			delete(want, p.Partition)
			continue
		}
		if err := kd.DeletePartition(p.Partition); err != nil {
			return err
		}
	}
	for n, w := range want {
		if err := kd.AddPartition(n, w[0], w[1]); err != nil {
			return err
		}
	}
	return nil
}

// Share implements Target.
func (t *BlockTarget) Share(d Disk) (Disk, error) {
	f, ok := file(d)
	if !ok {
		return nil, errors.New("sharing the disk: not a device file")
	}
	shared, err := os.OpenFile(f.Name(), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s again: %w", f.Name(), err)
	}
	if c, ok := d.(io.Closer); ok {
		c.Close()
	}
	return shared, nil
}

// MountBoot implements Target: the one partition whose filesystem label
// is "boot" is mounted on a new directory under the temporary directory.
func (t *BlockTarget) MountBoot(ctx context.Context, dest string, d Disk) (string, func() error, error) {
	var boot []blockdev.Device
	var fstype string
	deadline := time.Now().Add(cmpDur(t.NodeTimeout, 10*time.Second))
	for {
		parts, err := t.Kernel.Partitions(t.dev)
		if err != nil {
			return "", nil, err
		}
		boot = boot[:0]
		for _, p := range parts {
			typ, label := sys.ProbeFilesystem(d, p.Start*512)
			if label == "boot" {
				boot = append(boot, p)
				fstype = typ
			}
		}
		if len(boot) > 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	switch len(boot) {
	case 0:
		return "", nil, errors.New("no partition holds a filesystem labelled boot")
	case 1:
	default:
		return "", nil, fmt.Errorf("%d partitions hold a filesystem labelled boot", len(boot))
	}
	node, cleanup, err := t.node(ctx, boot[0], deadline)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "flint-boot-")
	if err != nil {
		cleanup()
		return "", nil, err
	}
	if err := t.Mounter.Mount(node, dir, fstype, 0, ""); err != nil {
		os.Remove(dir)
		cleanup()
		return "", nil, fmt.Errorf("mounting %s (%s): %w", node, fstype, err)
	}
	return dir, func() error {
		err := t.Mounter.Unmount(dir)
		if err == nil {
			err = os.Remove(dir)
		}
		cleanup()
		return err
	}, nil
}

// node returns a device node for a partition: /dev/<name> once devtmpfs
// has made it, or, if none appears in time (a container's /dev), one made
// with mknod in a private directory.
func (t *BlockTarget) node(ctx context.Context, p blockdev.Device, deadline time.Time) (string, func(), error) {
	for {
		var st unix.Stat_t
		if unix.Stat(p.Path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK &&
			fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)) == p.MajorMinor {
			return p.Path, func() {}, nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(p.MajorMinor, "%d:%d", &major, &minor); err != nil {
		return "", nil, fmt.Errorf("partition %s: device number %q", p.Name, p.MajorMinor)
	}
	dir, err := os.MkdirTemp("", "flint-node-")
	if err != nil {
		return "", nil, err
	}
	node := filepath.Join(dir, p.Name)
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(major, minor))); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("making a node for %s: %w", p.Name, err)
	}
	return node, func() { os.RemoveAll(dir) }, nil
}

// NewTarget returns the real destination side.
func NewTarget(m Mounter) Target { return &BlockTarget{Mounter: m} }

// IsTerminal says whether w is a terminal (TCGETS succeeds on it).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// SectorSize is dest's logical sector size (BLKSSZGET), read before the
// disk is opened for writing: --stream picks the image by it. A regular
// file counts as a disk of 512-byte sectors.
func (t *BlockTarget) SectorSize(dest string) (int64, error) {
	node, err := t.Kernel.Resolve(dest)
	if err != nil {
		return 0, fmt.Errorf("destination %s: %w", dest, err)
	}
	f, err := os.Open(node)
	if err != nil {
		return 0, fmt.Errorf("destination %s: %w", dest, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		return 512, nil
	}
	ss, err := unix.IoctlGetInt(int(f.Fd()), unix.BLKSSZGET)
	if err != nil {
		return 0, fmt.Errorf("destination %s: sector size: %w", dest, err)
	}
	return int64(ss), nil
}
