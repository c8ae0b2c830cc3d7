package platform

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			got:  vboxVersionInfoMsg(),
			// size_in 24+16, size_out 24+20; req_version, min_version
			// 0x00010000, two reserved words, one spare word of out
			want: hdr("28000000", "2c000000") + " 00000100 00000100 00000000 00000000 00000000",
		},
		{
			name: "connect",
			got:  vboxConnectMsg("VBoxGuestPropSvc"),
			// size_in 156, size_out 28; loc.type 2 (LOCALHOST_EXISTING),
			// the service name NUL-padded to 128 bytes
			want: hdr("9c000000", "1c000000") + " 02000000 " + name,
		},
		{
			name: "disconnect",
			got:  vboxDisconnectMsg(0x2a),
			want: hdr("1c000000", "18000000") + " 2a000000",
		},
		{
			name: "GET_PROP call",
			got: vboxCallMsg(0x2a, guestPropFnGetProp, []hgcmParam{
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

// fakeVBoxGuest plays /dev/vboxguest and the host's guest property service.
// It decodes messages from the layouts of the public headers, independently
// of the encoder.
type fakeVBoxGuest struct {
	t        *testing.T
	props    map[string]string
	readonly map[string]bool
	// noNUL fills the buffer without a terminating NUL.
	noNUL bool
	// grow makes a property need more room at every call.
	grow bool
	// errno fails the ioctl with that number; rcs sets a header status.
	errno map[uint32]error
	rcs   map[uint32]int32

	bufs      map[uint64][]byte
	nextAddr  uint64
	connected bool
	closed    bool
	calls     []uint32 // HGCM functions called
}

func newFakeVBoxGuest(t *testing.T, props map[string]string) *fakeVBoxGuest {
	return &fakeVBoxGuest{t: t, props: props, readonly: map[string]bool{}, errno: map[uint32]error{}, rcs: map[uint32]int32{}, bufs: map[uint64][]byte{}, nextAddr: 0x10000}
}

func (f *fakeVBoxGuest) addr(buf []byte) uint64 {
	a := f.nextAddr
	f.nextAddr += 0x10000
	f.bufs[a] = buf
	return a
}

func (f *fakeVBoxGuest) close() error {
	f.closed = true
	return nil
}

func (f *fakeVBoxGuest) ioctl(req uint32, msg []byte) error {
	le := binary.NativeEndian
	if req>>30 != 3 || (req>>8)&0xff != 'V' || (req>>16)&0x3fff != uint32(len(msg)) {
		f.t.Errorf("ioctl %#x with a %d-byte message: direction, type or size wrong", req, len(msg))
		return errors.New("EINVAL")
	}
	if err := f.errno[req&0xff]; err != nil {
		return err
	}
	sizeIn, version, sizeOut := le.Uint32(msg[0:]), le.Uint32(msg[4:]), le.Uint32(msg[16:])
	if version != 0x10001 || max(sizeIn, sizeOut) != uint32(len(msg)) || sizeIn < 24 {
		f.t.Errorf("ioctl %#x header: size_in %d, version %#x, size_out %d for %d bytes", req, sizeIn, version, sizeOut, len(msg))
	}
	setRC := func(rc int32) {
		if o, ok := f.rcs[req&0xff]; ok {
			rc = o
		}
		le.PutUint32(msg[12:], uint32(rc))
	}
	switch req & 0xff {
	case 0: // version info
		if le.Uint32(msg[24:]) != 0x10000 || le.Uint32(msg[28:]) != 0x10000 {
			f.t.Errorf("version info asks for %#x, minimum %#x", le.Uint32(msg[24:]), le.Uint32(msg[28:]))
		}
		le.PutUint32(msg[24:], 0x10000)
		setRC(0)
	case 4: // connect
		svc, _, _ := bytes.Cut(msg[28:28+128], []byte{0})
		if le.Uint32(msg[24:]) != 2 || string(svc) != "VBoxGuestPropSvc" {
			f.t.Errorf("connect to location type %d, service %q", le.Uint32(msg[24:]), svc)
		}
		if rc, ok := f.rcs[4]; ok {
			setRC(rc)
			return nil
		}
		f.connected = true
		le.PutUint32(msg[24:], 0x2a)
		setRC(0)
	case 5: // disconnect
		if le.Uint32(msg[24:]) != 0x2a || !f.connected {
			f.t.Errorf("disconnect of client %#x", le.Uint32(msg[24:]))
		}
		f.connected = false
		setRC(0)
	case 7: // HGCM call
		f.hgcm(msg)
		if o, ok := f.rcs[7]; ok {
			le.PutUint32(msg[12:], uint32(o))
		}
	default:
		f.t.Errorf("unexpected ioctl %#x", req)
	}
	return nil
}

func (f *fakeVBoxGuest) hgcm(msg []byte) {
	le := binary.NativeEndian
	client, fn, timeout := le.Uint32(msg[24:]), le.Uint32(msg[28:]), le.Uint32(msg[32:])
	n := int(le.Uint16(msg[38:]))
	if client != 0x2a || !f.connected || timeout != 0xffffffff || msg[36] != 1 || len(msg) != 40+16*n {
		f.t.Errorf("HGCM call: client %#x, timeout %#x, interruptible %d, %d parameters in %d bytes", client, timeout, msg[36], n, len(msg))
	}
	f.calls = append(f.calls, fn)
	param := func(i int) []byte { return msg[40+16*i : 56+16*i] }
	buf := func(i int, typ uint32) []byte {
		p := param(i)
		if le.Uint32(p) != typ {
			f.t.Errorf("parameter %d has type %d, want %d", i, le.Uint32(p), typ)
		}
		b := f.bufs[le.Uint64(p[8:])]
		if uint32(len(b)) != le.Uint32(p[4:]) {
			f.t.Errorf("parameter %d: size %d, buffer of %d", i, le.Uint32(p[4:]), len(b))
		}
		return b
	}
	name := func() string {
		b := buf(0, hgcmParmTypeLinAddrIn)
		s, rest, ok := bytes.Cut(b, []byte{0})
		if !ok || len(rest) != 0 {
			f.t.Errorf("property name %q is not exactly NUL-terminated", b)
		}
		return string(s)
	}
	rc := int32(0)
	switch fn {
	case guestPropFnGetProp:
		if n != 4 {
			f.t.Fatalf("GET_PROP with %d parameters", n)
		}
		prop := name()
		out := buf(1, hgcmParmTypeLinAddr)
		if le.Uint32(param(2)) != hgcmParmType64Bit || le.Uint32(param(3)) != hgcmParmType32Bit {
			f.t.Errorf("GET_PROP timestamp/size parameters have the wrong types")
		}
		v, ok := f.props[prop]
		if !ok {
			rc = verrNotFound
			break
		}
		if f.grow {
			f.props[prop] = v + strings.Repeat("x", 4096)
		}
		content := v + "\x00RDONLYGUEST\x00"
		if f.noNUL {
			// A broken answer: the whole buffer without a NUL.
			content = strings.Repeat("x", len(out))
		}
		le.PutUint32(param(3)[4:], uint32(len(content)))
		if len(content) > len(out) {
			rc = verrBufferOverflow
			break
		}
		copy(out, content)
		le.PutUint64(param(2)[4:], uint64(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()))
	case guestPropFnDelProp:
		if n != 1 {
			f.t.Fatalf("DEL_PROP with %d parameters", n)
		}
		prop := name()
		if f.readonly[prop] {
			rc = verrPermissionDenied
			break
		}
		delete(f.props, prop)
	default:
		f.t.Errorf("HGCM function %d", fn)
	}
	le.PutUint32(msg[12:], uint32(rc))
}

func testVirtualBox(t *testing.T, dev *fakeVBoxGuest, withDevice bool) *virtualboxProvider {
	root := t.TempDir()
	if withDevice {
		if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "dev/vboxguest"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := newVirtualBox(Env{Root: root, Logger: hvTestLogger(t), Wait: 50 * time.Millisecond}).(*virtualboxProvider)
	p.open = func(path string) (vboxDevice, error) {
		if path != filepath.Join(root, "dev/vboxguest") {
			t.Errorf("opened %s", path)
		}
		return dev, nil
	}
	return p
}

func TestVirtualBoxFetchConfig(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	big := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/big","contents":{"source":"data:,` + strings.Repeat("a", 5000) + `"}}]}}`
	errIO := errors.New("EIO")
	tests := []struct {
		name     string
		props    map[string]string
		noDevice bool
		setup    func(*fakeVBoxGuest)
		want     string
		wantErr  error
		errText  string
		getProps int
	}{
		{name: "config", props: map[string]string{"/Ignition/Config": config}, want: config, getProps: 2},
		{name: "empty encoding is fine", props: map[string]string{"/Ignition/Config": config, "/Ignition/Config/Encoding": ""}, want: config, getProps: 2},
		{name: "larger than the first buffer", props: map[string]string{"/Ignition/Config": big}, want: big, getProps: 3},
		{name: "no property", props: map[string]string{}, wantErr: ErrNoConfig, getProps: 2},
		{name: "empty property", props: map[string]string{"/Ignition/Config": ""}, wantErr: ErrNoConfig, getProps: 2},
		{name: "encoding set", props: map[string]string{"/Ignition/Config": config, "/Ignition/Config/Encoding": "gzip"}, errText: `unsupported /Ignition/Config/Encoding value "gzip"`, getProps: 1},
		{name: "no device", noDevice: true, wantErr: ErrNoProvider},
		{name: "growing property", props: map[string]string{"/Ignition/Config": big}, setup: func(f *fakeVBoxGuest) { f.grow = true }, errText: "keeps growing", getProps: 6},
		{name: "value without NUL", props: map[string]string{"/Ignition/Config/Encoding": "", "/Ignition/Config": config}, setup: func(f *fakeVBoxGuest) { f.noNUL = true }, errText: "not NUL-terminated", getProps: 1},
		{name: "host error", props: map[string]string{"/Ignition/Config": config}, setup: func(f *fakeVBoxGuest) { f.rcs[7] = -2 }, errText: "VirtualBox status -2", getProps: 1},
		{name: "call ioctl fails", props: map[string]string{"/Ignition/Config": config}, setup: func(f *fakeVBoxGuest) { f.errno[7] = errIO }, wantErr: errIO},
		{name: "connect refused", setup: func(f *fakeVBoxGuest) { f.rcs[4] = verrNotFound }, errText: "connecting to VBoxGuestPropSvc: VERR_NOT_FOUND"},
		{name: "old driver", setup: func(f *fakeVBoxGuest) { f.rcs[0] = -11 }, errText: "negotiating the vboxguest interface version"},
		{name: "version ioctl fails", setup: func(f *fakeVBoxGuest) { f.errno[0] = errIO }, wantErr: errIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := newFakeVBoxGuest(t, tt.props)
			if tt.setup != nil {
				tt.setup(dev)
			}
			got, err := testVirtualBox(t, dev, !tt.noDevice).FetchConfig(context.Background())
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("FetchConfig() = %.40q, %v; want %v", got, err, tt.wantErr)
				}
			case tt.errText != "":
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("FetchConfig() error = %v, want one containing %q", err, tt.errText)
				}
			default:
				if err != nil || string(got) != tt.want {
					t.Errorf("FetchConfig() = %.40q, %v; want %.40q", got, err, tt.want)
				}
			}
			if len(dev.calls) != tt.getProps {
				t.Errorf("%d HGCM calls, want %d", len(dev.calls), tt.getProps)
			}
			if !tt.noDevice && (dev.connected || !dev.closed) {
				t.Errorf("after FetchConfig: connected %v, closed %v; want disconnected and closed", dev.connected, dev.closed)
			}
		})
	}
}

func TestVirtualBoxDeleteConfig(t *testing.T) {
	tests := []struct {
		name     string
		props    map[string]string
		readonly string
		want     map[string]string
		errText  string
	}{
		{name: "both", props: map[string]string{"/Ignition/Config": "{}", "/Ignition/Config/Encoding": "", "/Other": "x"}, want: map[string]string{"/Other": "x"}},
		{name: "none", props: map[string]string{"/Other": "x"}, want: map[string]string{"/Other": "x"}},
		{name: "read-only", props: map[string]string{"/Ignition/Config": "{}"}, readonly: "/Ignition/Config", want: map[string]string{"/Ignition/Config": "{}"}, errText: "VERR_PERMISSION_DENIED (is the property read-only for the guest?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := newFakeVBoxGuest(t, tt.props)
			if tt.readonly != "" {
				dev.readonly[tt.readonly] = true
			}
			err := testVirtualBox(t, dev, true).DeleteConfig(context.Background())
			if tt.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("DeleteConfig() error = %v, want one containing %q", err, tt.errText)
				}
			} else if err != nil {
				t.Errorf("DeleteConfig() error: %v", err)
			}
			if len(dev.props) != len(tt.want) {
				t.Errorf("after DeleteConfig properties = %v, want %v", dev.props, tt.want)
			}
			for k, v := range tt.want {
				if dev.props[k] != v {
					t.Errorf("after DeleteConfig properties = %v, want %v", dev.props, tt.want)
				}
			}
			if dev.connected || !dev.closed {
				t.Errorf("after DeleteConfig: connected %v, closed %v", dev.connected, dev.closed)
			}
		})
	}
}
