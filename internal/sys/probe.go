package sys

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
)

// ProbeFilesystem reads a filesystem's type and label from its superblock at off
// on the disk: ext2/3/4 (magic 0xEF53 at 1080, label at 1144), XFS
// ("XFSB" at 0, label at 108), btrfs ("_BHRfS_M" at 65600, label at
// 65835) and FAT (label in the boot sector, at 71 for FAT32, 43 before);
// "" when it is none of them. mount(2) needs the type: the kernel has no
// "auto" (ext4's driver mounts ext2 and ext3 too).
func ProbeFilesystem(d io.ReaderAt, off int64) (fstype, label string) {
	buf := make([]byte, 4096)
	if _, err := d.ReadAt(buf, off); err != nil {
		return "", ""
	}
	cstr := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	if binary.LittleEndian.Uint16(buf[1080:]) == 0xef53 {
		return "ext4", cstr(buf[1144:1160])
	}
	if string(buf[:4]) == "XFSB" {
		return "xfs", cstr(buf[108:120])
	}
	if buf[510] == 0x55 && buf[511] == 0xaa {
		if string(buf[82:90]) == "FAT32   " {
			return "vfat", strings.TrimRight(string(buf[71:82]), " ")
		}
		if string(buf[54:57]) == "FAT" {
			return "vfat", strings.TrimRight(string(buf[43:54]), " ")
		}
	}
	// The label is 256 bytes at 299 in the superblock: past its first
	// sector.
	bt := make([]byte, 1024)
	if _, err := d.ReadAt(bt, off+65536); err == nil && string(bt[64:72]) == "_BHRfS_M" {
		return "btrfs", cstr(bt[299 : 299+256])
	}
	return "", ""
}
