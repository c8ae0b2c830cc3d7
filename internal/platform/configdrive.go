package platform

// Config drives: a small filesystem (iso9660, vfat, udf, sometimes ext4)
// that the hypervisor attaches with a well-known label (config-2, cidata)
// and that holds the user-data as a plain file. OpenStack, CloudStack,
// Nutanix, PowerVS, KubeVirt, IBM Cloud and Proxmox VE deliver configs this
// way; Azure's provisioning CD-ROM (azure_ovf.go) is a close cousin.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// errNoDrive means no drive with any of the wanted labels appeared within
// the time the platform allows. Callers decide what that means: IBM Cloud
// and Proxmox VE boot with an empty config, OpenStack keeps waiting for
// the metadata service.
var errNoDrive = errors.New("no config drive appeared")

// mountReadOnly is MS_RDONLY from mount(2). Config drives are never
// written: a read-only mount also keeps the kernel from replaying an ext4
// journal on a drive the hypervisor may share between boots.
const mountReadOnly uintptr = 1

// drivePollInterval is how often Ignition looks for a config drive
// that has not appeared yet.
const drivePollInterval = time.Second

// byLabelDir is where udev links filesystems by their label.
const byLabelDir = "/dev/disk/by-label"

// readDriveFile waits up to wait (0: until ctx ends) for a filesystem with
// one of labels to appear under /dev/disk/by-label, mounts it read-only,
// and returns the contents of relPath on it.
//
// It returns an error wrapping errNoDrive when no drive appeared in time,
// and one wrapping ErrNoConfig when the drive has no such file or the file
// is empty (Ignition treats both as "no user-data": an empty config).
func readDriveFile(ctx context.Context, env Env, labels []string, relPath string, wait time.Duration) ([]byte, error) {
	dev, err := findDrive(ctx, env, labels, wait)
	if err != nil {
		return nil, err
	}
	return withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		return readDriveData(dir, dev, relPath)
	})
}

// readDriveData reads relPath under the mounted drive at dir. A missing or
// empty file is ErrNoConfig.
func readDriveData(dir, dev, relPath string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.Clean("/"+relPath)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s on config drive %s: %w", relPath, dev, ErrNoConfig)
	case err != nil:
		return nil, fmt.Errorf("reading %s on config drive %s: %w", relPath, dev, err)
	case len(data) == 0:
		return nil, fmt.Errorf("%s on config drive %s is empty: %w", relPath, dev, ErrNoConfig)
	}
	return data, nil
}

// findDrive returns the path of the first /dev/disk/by-label entry (under
// env's root) that exists for one of labels, waiting up to wait for one to
// appear (0: until ctx ends).
func findDrive(ctx context.Context, env Env, labels []string, wait time.Duration) (string, error) {
	var dev string
	found := func() bool {
		for _, label := range labels {
			p := env.path(filepath.Join(byLabelDir, label))
			if _, err := os.Stat(p); err == nil {
				dev = p
				return true
			}
		}
		return false
	}
	if found() {
		return dev, nil
	}
	env.logger().Info("waiting for config drive", "op", "config drive", "labels", labels, "timeout", wait)
	ok, err := pollUntil(ctx, wait, drivePollInterval, found)
	if err != nil {
		return "", fmt.Errorf("waiting for config drive %v: %w", labels, err)
	}
	if !ok {
		return "", fmt.Errorf("config drive %v after %v: %w", labels, wait, errNoDrive)
	}
	return dev, nil
}

// pollUntil calls check now and then every interval until it reports
// true (→ true, nil), timeout passes (→ false, nil; timeout 0 never
// passes) or ctx ends (→ false, ctx.Err()). A timeout much shorter than
// interval (tests) shortens the interval to a tenth of the timeout, so a
// short wait still looks more than once.
func pollUntil(ctx context.Context, timeout, interval time.Duration, check func() bool) (bool, error) {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
		if interval > timeout/10 {
			interval = max(timeout/10, time.Millisecond)
		}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if check() {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-deadline:
			// One last look: the drive may have appeared just now.
			return check(), nil
		case <-tick.C:
		}
	}
}

// withDrive probes the filesystem on dev, mounts it read-only at a fresh
// temporary directory, calls read with that directory, then unmounts and
// removes the directory. When allowed is not empty the filesystem must be
// one of those types.
func withDrive(env Env, dev string, allowed []string, read func(dir string) ([]byte, error)) ([]byte, error) {
	if env.Mounter == nil {
		return nil, fmt.Errorf("config drive %s: no mounter configured", dev)
	}
	fstype, err := probeDeviceFS(dev)
	if err != nil {
		return nil, err
	}
	if len(allowed) > 0 && !slices.Contains(allowed, fstype) {
		return nil, fmt.Errorf("config drive %s has a %s filesystem, want one of %v: %w", dev, fstype, allowed, errUnknownFS)
	}
	dir, err := os.MkdirTemp("", "flint-drive-")
	if err != nil {
		return nil, fmt.Errorf("mount point for config drive %s: %w", dev, err)
	}
	log := env.logger().With("op", "config drive", "device", dev, "fstype", fstype, "mountpoint", dir)
	defer func() {
		if err := os.Remove(dir); err != nil {
			log.Warn("removing config drive mount point", "error", err)
		}
	}()

	start := time.Now()
	log.Info("[started] mounting config drive read-only")
	if err := env.Mounter.Mount(dev, dir, fstype, mountReadOnly, ""); err != nil {
		log.Error("[failed] mounting config drive", "error", err, "duration", time.Since(start))
		return nil, fmt.Errorf("mounting config drive %s (%s) at %s: %w", dev, fstype, dir, err)
	}
	log.Info("[finished] mounting config drive", "duration", time.Since(start))
	defer func() {
		// A failed unmount leaves a read-only mount in the initramfs,
		// which switch-root drops: worth a warning, not a failed boot.
		if err := env.Mounter.Unmount(dir); err != nil {
			log.Warn("unmounting config drive", "error", err)
		}
	}()
	return read(dir)
}

// errUnknownFS means a drive holds no filesystem flint knows how to mount.
var errUnknownFS = errors.New("unrecognised filesystem")

// probeLen is how much of a device the probe reads: the ext superblock,
// the FAT boot sector, and the ISO 9660 / UDF volume descriptors that start
// at 32 KiB, with room for a UDF recognition sequence on 4 KiB sectors.
const probeLen = 128 << 10

// probeDeviceFS reads the start of dev and names the filesystem on it as
// mount(2) wants it. mount(2) has no "auto": mount(8) probes with libblkid,
// which the initramfs need not carry, so flint reads the superblocks itself.
func probeDeviceFS(dev string) (string, error) {
	f, err := os.Open(dev)
	if err != nil {
		return "", fmt.Errorf("probing config drive: %w", err)
	}
	defer f.Close()
	fstype, err := probeFS(f)
	if err != nil {
		return "", fmt.Errorf("probing config drive %s: %w", dev, err)
	}
	return fstype, nil
}

// probeFS names the filesystem whose start r holds: "udf", "iso9660",
// "ext4" or "vfat".
func probeFS(r io.ReaderAt) (string, error) {
	buf := make([]byte, probeLen)
	n, err := r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	buf = buf[:n]
	switch {
	// UDF first: Azure and many authoring tools write UDF "bridge"
	// discs that also carry an ISO 9660 descriptor, and the UDF view is the
	// complete one.
	case isUDF(buf):
		return "udf", nil
	case isISO9660(buf):
		return "iso9660", nil
	case isExt(buf):
		// The ext4 driver mounts ext2 and ext3 too, and it is the one
		// every initramfs carries.
		return "ext4", nil
	case isVFAT(buf):
		return "vfat", nil
	}
	return "", errUnknownFS
}

// vrsStart is where the ISO 9660 / ECMA-167 volume recognition area
// begins: sector 16 of 2048-byte sectors (ECMA-167 2/8.3).
const vrsStart = 32768

// isISO9660 looks for the ISO 9660 standard identifier "CD001" in the
// first volume descriptor (type byte, then the identifier).
func isISO9660(b []byte) bool {
	return len(b) >= vrsStart+6 && string(b[vrsStart+1:vrsStart+6]) == "CD001"
}

// isUDF walks the volume recognition sequence (ECMA-167 2/9): descriptors
// of 2048 bytes, or one sector each when sectors are larger, each with
// a 5-byte standard identifier at offset 1. A UDF volume has an NSR02 or
// NSR03 descriptor in it; the sequence ends at the first descriptor whose
// identifier is none of the known ones.
func isUDF(b []byte) bool {
	for _, stride := range []int{2048, 4096} {
	walk:
		for off := vrsStart; off+6 <= len(b); off += stride {
			switch string(b[off+1 : off+6]) {
			case "NSR02", "NSR03":
				return true
			case "BEA01", "TEA01", "CD001", "CDW02", "BOOT2":
			default:
				break walk
			}
		}
	}
	return false
}

// isExt checks the ext2/3/4 superblock magic 0xEF53 (little-endian) at
// byte 56 of the superblock, which starts at byte 1024.
func isExt(b []byte) bool {
	return len(b) >= 1082 && b[1080] == 0x53 && b[1081] == 0xEF
}

// isVFAT checks the FAT boot sector: an x86 jump, the 0x55 0xAA signature
// at 510, and the "FAT" file-system type string where FAT12/16 (offset 54)
// or FAT32 (offset 82) keep it. A partition table also ends in 0x55 0xAA,
// so the signature alone is not enough.
func isVFAT(b []byte) bool {
	if len(b) < 512 || b[510] != 0x55 || b[511] != 0xAA {
		return false
	}
	if b[0] != 0xEB && b[0] != 0xE9 {
		return false
	}
	return bytes.HasPrefix(b[54:], []byte("FAT")) || bytes.HasPrefix(b[82:], []byte("FAT32"))
}

// findDriveLabel waits for a drive labelled with one of labels as
// readDriveFile does and returns the label found (the first of labels
// present). KubeVirt's agent reads whichever of its two drives the VM has.
func findDriveLabel(ctx context.Context, env Env, labels []string, wait time.Duration) (string, error) {
	dev, err := findDrive(ctx, env, labels, wait)
	if err != nil {
		return "", err
	}
	return filepath.Base(dev), nil
}

// readDriveFiles mounts the drive labelled with one of labels read-only
// once and returns the contents of each of names (paths on the drive) that exists;
// a missing file is left out of the map. It waits for the drive as
// readDriveFile does. The agent reads a NoCloud (cidata) drive's
// meta-data, user-data and vendor-data with it.
func readDriveFiles(ctx context.Context, env Env, labels []string, names []string, wait time.Duration) (map[string][]byte, error) {
	dev, err := findDrive(ctx, env, labels, wait)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	_, err = withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		for _, name := range names {
			data, err := readDriveData(dir, dev, name)
			if errors.Is(err, ErrNoConfig) {
				continue
			}
			if err != nil {
				return nil, err
			}
			files[name] = data
		}
		return nil, nil
	})
	return files, err
}
