package sys

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestProbeFilesystem(t *testing.T) {
	image := func(f func(b []byte)) []byte {
		b := make([]byte, 70000)
		f(b)
		return b
	}
	for _, tc := range []struct {
		name          string
		b             []byte
		fstype, label string
	}{
		{"ext4", image(func(b []byte) {
			binary.LittleEndian.PutUint16(b[1080:], 0xef53)
			copy(b[1144:], "boot")
		}), "ext4", "boot"},
		{"xfs", image(func(b []byte) { copy(b, "XFSB"); copy(b[108:], "root") }), "xfs", "root"},
		{"fat32", image(func(b []byte) {
			b[510], b[511] = 0x55, 0xaa
			copy(b[82:], "FAT32   ")
			copy(b[71:], "EFI-SYSTEM ")
		}), "vfat", "EFI-SYSTEM"},
		{"btrfs", image(func(b []byte) { copy(b[65536+64:], "_BHRfS_M"); copy(b[65536+299:], "data") }), "btrfs", "data"},
		{"nothing", image(func([]byte) {}), "", ""},
		{"short", []byte{1, 2, 3}, "", ""},
	} {
		fstype, label := ProbeFilesystem(bytes.NewReader(tc.b), 0)
		if fstype != tc.fstype || label != tc.label {
			t.Errorf("ProbeFilesystem(%s) = %q, %q, want %q, %q", tc.name, fstype, label, tc.fstype, tc.label)
		}
	}
}
