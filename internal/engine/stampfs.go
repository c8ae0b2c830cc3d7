package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// The stamp on a filesystem the engine mounts only for it
// (Options.StampDevice): in the dracut module the filesystem labelled
// boot, where `flint install` and coreos-installer leave
// ignition.firstboot (fedora-coreos-config keeps that flag there too, and
// its GRUB config adds the ignition.firstboot argument while it exists).
// It outlives a reboot, which /run does not, and it is mounted only
// around the stamp's reads and writes: the disks stage may repartition
// the disk it is on, and a mounted partition would be busy.

// StampMounter mounts the stamp's filesystem at its directory.
type StampMounter interface {
	// Mount mounts device at dir, read-write or read-only; an error
	// wrapping errNoStampFS means there is no filesystem to mount.
	Mount(ctx context.Context, device, dir string, readWrite bool) error
	// Unmount unmounts dir.
	Unmount(ctx context.Context, dir string) error
}

// errNoStampFS means the stamp's device holds no filesystem flint can
// mount: the stage goes on without the stamp, as without the device.
var errNoStampFS = errors.New("no ext4, xfs, btrfs or FAT filesystem")

// kernelMounter mounts with mount(2), the type read from the superblock
// (sys.ProbeFilesystem): no process, where mount(8) would cost one per
// stage, each a tenth of a second in an emulated VM.
type kernelMounter struct{}

func (kernelMounter) Mount(_ context.Context, device, dir string, readWrite bool) error {
	f, err := os.Open(device)
	if err != nil {
		return err
	}
	fstype, _ := sys.ProbeFilesystem(f, 0)
	f.Close()
	if fstype == "" {
		return fmt.Errorf("%s: %w", device, errNoStampFS)
	}
	return sys.Mounter{}.Mount(device, dir, fstype, stampMountFlags(readWrite), "")
}

func (kernelMounter) Unmount(_ context.Context, dir string) error {
	return sys.Mounter{}.Unmount(dir)
}

// withStampFS runs f with the stamp's filesystem mounted (read-write when
// rw), when the engine mounts it, and unmounts it after.
func withStampFS(ctx context.Context, o Options, rw bool, f func() error) error {
	if o.StampDevice == "" {
		return f()
	}
	dir := filepath.Dir(o.StampFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	if err := o.StampMounter.Mount(ctx, o.StampDevice, dir, rw); err != nil {
		return fmt.Errorf("first-boot stamp: mounting %s: %w", o.StampDevice, err)
	}
	ferr := f()
	if err := o.StampMounter.Unmount(ctx, dir); err != nil {
		return errors.Join(ferr, fmt.Errorf("first-boot stamp: unmounting %s: %w", dir, err))
	}
	return ferr
}

// stampDeviceUsable returns the device the stamp is kept on in this
// stage, and false when it cannot be kept: the device must be there, and in the stages that write the
// stamp the config must not wipe or remake it (then the stamp would go
// with it, or hold the disk busy). Why not is logged at info level in the
// disks stage, the first that writes the stamp, and at debug level in the
// others, so the log says it once. The config cache it parsed, if any,
// is returned for the stage (stages.Env.Cache), which then does not
// read it again.
func stampDeviceUsable(o Options, stage string, writes bool, log *slog.Logger) (string, bool, *config.Config) {
	level := slog.LevelDebug
	if stage == "disks" {
		level = slog.LevelInfo
	}
	var cfg config.Config
	parsed := false
	if writes {
		if raw, err := os.ReadFile(o.ConfigCache); err == nil {
			if c, err := config.ParseRendered(raw); err == nil {
				cfg, parsed = c, true
			}
		}
	}
	var cache *config.Config
	if parsed {
		cache = &cfg
	}
	// The disk the disks stage writes to may come up after the stages
	// before it looked (a VM's virtio disk did, after fetch-offline): it
	// waits for the devices the config names before the stamp is
	// looked for on them.
	if stage == "disks" && parsed {
		waitForDevices(storageDevices(cfg.Storage), o.DeviceTimeout)
	}
	// udev may not have made the link yet (it did not in a VM's disks
	// stage): the kernel's block devices are there, and their
	// superblocks say which carries the label.
	if dir, label := filepath.Split(o.StampDevice); dir == "/dev/disk/by-label/" {
		if _, err := os.Stat(o.StampDevice); err != nil {
			switch found := devicesLabelled("/sys/class/block", "/dev", label); len(found) {
			case 0:
			case 1:
				log.Debug("udev has not linked "+o.StampDevice+" yet: the stamp is on "+found[0], "device", found[0])
				o.StampDevice = found[0]
			default:
				log.Log(context.Background(), level, "more than one filesystem labelled "+label+": running without the first-boot stamp", "devices", strings.Join(found, " "))
				return "", false, cache
			}
		}
	}
	if _, err := os.Stat(o.StampDevice); err != nil {
		log.Log(context.Background(), level, "no "+o.StampDevice+": running without the first-boot stamp", "error", err)
		return "", false, cache
	}
	if !writes {
		return o.StampDevice, true, nil
	}
	if !parsed {
		// The stage reports a missing or broken cache itself.
		return o.StampDevice, true, nil
	}
	if why := stampDeviceTouched(cfg.Storage, o.StampDevice, partitionOf); why != "" {
		log.Log(context.Background(), level, "the config "+why+": running without the first-boot stamp, which would go with it", "device", o.StampDevice)
		return "", false, cache
	}
	return o.StampDevice, true, cache
}

// devicesLabelled lists the block devices (sysBlock: /sys/class/block,
// their nodes in dev) whose filesystem carries label.
func devicesLabelled(sysBlock, dev, label string) []string {
	entries, err := os.ReadDir(sysBlock)
	if err != nil {
		return nil
	}
	var found []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "loop") || strings.HasPrefix(e.Name(), "ram") || strings.HasPrefix(e.Name(), "zram") {
			continue
		}
		node := filepath.Join(dev, e.Name())
		f, err := os.Open(node)
		if err != nil {
			continue
		}
		if _, l := sys.ProbeFilesystem(f, 0); l == label {
			found = append(found, node)
		}
		f.Close()
	}
	return found
}

// stampDeviceTouched says how the config's storage would wipe or remake
// the filesystem at dev, or "" when it leaves it alone: a partition table
// wiped on its disk, a partition with its number on that disk or any
// partition labelled boot, a filesystem made on it or labelled boot, or
// a RAID array over it or its disk. partOf is partitionOf (a test's
// stand-in for sysfs).
func stampDeviceTouched(st config.Storage, dev string, partOf func(string) (string, int)) string {
	real, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return ""
	}
	disk, number := partOf(real)
	same := func(path string) bool {
		p, err := filepath.EvalSymlinks(path)
		return err == nil && p == real
	}
	onDisk := func(path string) bool {
		p, err := filepath.EvalSymlinks(path)
		return err == nil && disk != "" && p == disk
	}
	for _, d := range st.Disks {
		for _, p := range d.Partitions {
			if p.Label != nil && *p.Label == "boot" {
				return "makes a partition labelled boot on " + d.Device
			}
		}
		if !onDisk(d.Device) {
			continue
		}
		if d.WipeTable != nil && *d.WipeTable {
			return "wipes the partition table of " + d.Device + ", which holds " + dev
		}
		for _, p := range d.Partitions {
			if p.Number == number {
				return "changes partition " + strconv.Itoa(number) + " of " + d.Device + ", which is " + dev
			}
		}
	}
	for _, fs := range st.Filesystems {
		wipe := fs.WipeFilesystem != nil && *fs.WipeFilesystem
		if wipe && (same(fs.Device) || fs.Label != nil && *fs.Label == "boot") {
			return "makes the filesystem " + fs.Device + " anew"
		}
	}
	for _, r := range st.Raid {
		for _, m := range r.Devices {
			if same(m) || onDisk(m) {
				return "builds RAID array " + r.Name + " over " + m
			}
		}
	}
	return ""
}

// partitionOf returns the disk a partition device is on and its number
// (from /sys/class/block), or "" and 0 for a device that is not a
// partition.
func partitionOf(dev string) (string, int) {
	name := filepath.Base(dev)
	raw, err := os.ReadFile(filepath.Join("/sys/class/block", name, "partition"))
	if err != nil {
		return "", 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return "", 0
	}
	sysdir, err := filepath.EvalSymlinks(filepath.Join("/sys/class/block", name))
	if err != nil {
		return "", 0
	}
	return filepath.Join(filepath.Dir(dev), filepath.Base(filepath.Dir(sysdir))), n
}

// storageDevices lists the devices the config's storage names.
func storageDevices(st config.Storage) []string {
	var devs []string
	for _, d := range st.Disks {
		devs = append(devs, d.Device)
	}
	for _, r := range st.Raid {
		devs = append(devs, r.Devices...)
	}
	for _, l := range st.Luks {
		if l.Device != nil {
			devs = append(devs, *l.Device)
		}
	}
	return devs
}

// devicePoll is how often waitForDevices looks for a device node, as
// the disks stage itself does (disks.pollInterval, the reference's 10 ms):
// the stage waits behind it, and a look is one stat(2). Looking every
// 0.1 s, a VM's disks stage that started before its disk came up waited
// up to 0.1 s past the node's appearance.
const devicePoll = 10 * time.Millisecond

// waitForDevices waits until every path exists, for at most timeout in
// all (the disks stage then says which did not come up).
func waitForDevices(paths []string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, p := range paths {
		for {
			if _, err := os.Stat(p); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(devicePoll)
		}
	}
}
