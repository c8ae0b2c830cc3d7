package vbox

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
)

// skipBigEndian: the expected byte layouts below are written little-endian,
// as VirtualBox guests (x86, arm64) are.
func skipBigEndian(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the expected layouts are little-endian")
	}
}

// unhex decodes a layout written as hex with spaces and newlines.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVBoxIoctlNumbers checks the request numbers against
// _IOC(_IOC_READ|_IOC_WRITE, 'V', nr, sizeof(struct …)) worked out by
// hand: dir 3 in bits 30-31, the size in bits 16-29, 'V' (0x56), nr.
func TestVBoxIoctlNumbers(t *testing.T) {
	tests := []struct {
		name string
		got  uint32
		want uint32
	}{
		// struct vbg_ioctl_driver_version_info: 24 + max(16, 20) = 44 = 0x2c
		{"VBG_IOCTL_DRIVER_VERSION_INFO", vbgIoctlDriverVersionInfo, 0xc02c5600},
		// struct vbg_ioctl_hgcm_connect: 24 + max(4+128, 4) = 156 = 0x9c
		{"VBG_IOCTL_HGCM_CONNECT", vbgIoctlHGCMConnect, 0xc09c5604},
		// struct vbg_ioctl_hgcm_disconnect: 24 + 4 = 28 = 0x1c
		{"VBG_IOCTL_HGCM_DISCONNECT", vbgIoctlHGCMDisconnect, 0xc01c5605},
		// vbg_ioctl_hgcm_call (40) + 4 parameters of 16 = 104 = 0x68
		{"VBG_IOCTL_HGCM_CALL_64(104)", vbgIoctlHGCMCall64(104), 0xc0685607},
		// one parameter: 56 = 0x38
		{"VBG_IOCTL_HGCM_CALL_64(56)", vbgIoctlHGCMCall64(56), 0xc0385607},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}

// TestVBoxMessageLayouts compares the encoded messages with byte layouts
// written from the structures of <linux/vboxguest.h> and
// <linux/vbox_vmmdev_types.h>.
func TestVBoxMessageLayouts(t *testing.T) {
	skipBigEndian(t)
	hdr := func(sizeIn, sizeOut string) string {
		// size_in, version 0x10001, type 0, rc 0, size_out, reserved
		return sizeIn + " 01000100 00000000 00000000 " + sizeOut + " 00000000"
	}
	name := hex.EncodeToString([]byte("VBoxGuestPropSvc")) + strings.Repeat("00", 128-16)

	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{
			name: "version info",
			got:  versionInfoMsg(),
			// size_in 24+16, size_out 24+20; req_version, min_version
			// 0x00010000, two reserved words, one spare word of out
			want: hdr("28000000", "2c000000") + " 00000100 00000100 00000000 00000000 00000000",
		},
		{
			name: "connect",
			got:  connectMsg("VBoxGuestPropSvc"),
			// size_in 156, size_out 28; loc.type 2 (LOCALHOST_EXISTING),
			// the service name NUL-padded to 128 bytes
			want: hdr("9c000000", "1c000000") + " 02000000 " + name,
		},
		{
			name: "disconnect",
			got:  disconnectMsg(0x2a),
			want: hdr("1c000000", "18000000") + " 2a000000",
		},
		{
			name: "GET_PROP call",
			got: callMsg(0x2a, guestPropFnGetProp, []hgcmParam{
				{typ: hgcmParmTypeLinAddrIn, buf: []byte("/a\x00")},
				{typ: hgcmParmTypeLinAddr, buf: make([]byte, 1024)},
				{typ: hgcmParmType64Bit},
				{typ: hgcmParmType32Bit, value: 7},
			}, func(b []byte) uint64 {
				if len(b) == 3 {
					return 0x7f0011223344
				}
				return 0x7f0055667788
			}),
			want: hdr("68000000", "68000000") +
				// client_id, function 1, timeout_ms U32_MAX,
				// interruptible 1, reserved, parm_count 4
				" 2a000000 01000000 ffffffff 01 00 0400" +
				// LINADDR_IN: type 5, size 3, linear_addr
				" 05000000 03000000 44332211007f0000" +
				// LINADDR: type 4, size 1024, linear_addr
				" 04000000 00040000 88776655007f0000" +
				// 64BIT: type 2, value64 0, 4 bytes of union left
				" 02000000 0000000000000000 00000000" +
				// 32BIT: type 1, value32 7
				" 01000000 07000000 0000000000000000",
		},
	}
	for _, tt := range tests {
		want := unhex(t, tt.want)
		if !bytes.Equal(tt.got, want) {
			t.Errorf("%s message =\n%x\nwant\n%x", tt.name, tt.got, want)
		}
	}
}
