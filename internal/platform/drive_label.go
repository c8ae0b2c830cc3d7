package platform

// Finding a drive by its label before udev runs. The initramfs's network
// arguments must be chosen before dracut's cmdline hook, when udev has
// not yet made /dev/disk/by-label: the kernel has the block devices
// already, so flint lists /sys/class/block and reads each device's label
// from its filesystem's first sectors, as blkid does (Afterburn mounts the
// drive by its label the same way: coreos/afterburn
// src/providers/proxmoxve/configdrive.rs).

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// volumeLabel returns the label of the ISO 9660 or FAT filesystem whose
// start r holds, "" when it is neither or has none.
func volumeLabel(r io.ReaderAt) string {
	buf := make([]byte, vrsStart+2048)
	n, err := r.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	buf = buf[:n]
	switch {
	case isISO9660(buf) && buf[vrsStart] == 1:
		// The primary volume descriptor (type 1): the volume identifier,
		// 32 d-characters padded with spaces, at byte 40 (ECMA-119 8.4.6).
		if len(buf) < vrsStart+72 {
			return ""
		}
		return string(bytes.TrimRight(buf[vrsStart+40:vrsStart+72], " \x00"))
	case isVFAT(buf):
		// The boot sector's volume label, 11 bytes padded with spaces:
		// at 71 on FAT32, at 43 on FAT12/16 (Microsoft's FAT
		// specification, BS_VolLab).
		off := 43
		if bytes.HasPrefix(buf[82:], []byte("FAT32")) {
			off = 71
		}
		label := string(bytes.TrimRight(buf[off:off+11], " \x00"))
		if label == "NO NAME" {
			return ""
		}
		return label
	}
	return ""
}

// findDriveInSysfs returns /dev/<name> (under env's root) of the first
// block device, in /sys/class/block's order, whose filesystem is labelled
// with one of labels; ok is false when none is.
func findDriveInSysfs(env Env, labels []string) (dev string, ok bool) {
	entries, err := os.ReadDir(env.path("/sys/class/block"))
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		p := env.path(filepath.Join("/dev", e.Name()))
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		label := volumeLabel(f)
		f.Close()
		for _, l := range labels {
			if label != "" && label == l {
				return p, true
			}
		}
	}
	return "", false
}
