// Package vboxtest has a fake vboxguest driver and guest property
// service for tests of package vbox and of its users: it decodes the
// messages from the layouts of the public headers (<linux/vboxguest.h>,
// <linux/vbox_vmmdev_types.h>), independently of package vbox's encoder.
//
// Family: config sources, platforms and agent (internal/README.md).
package vboxtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

// FakeGuest plays /dev/vboxguest and the host's guest property service.
// It decodes messages from the layouts of the public headers, independently
// of the encoder.
type FakeGuest struct {
	t *testing.T
	// Props are the host's guest properties; Readonly those the guest
	// may not delete.
	Props    map[string]string
	Readonly map[string]bool
	// NoNUL fills the buffer without a terminating NUL.
	NoNUL bool
	// Grow makes a property need more room at every call.
	Grow bool
	// Errno fails the ioctl of that number; RCs sets a header status.
	Errno map[uint32]error
	RCs   map[uint32]int32

	bufs     map[uint64][]byte
	nextAddr uint64
	// Connected and Closed are the connection's and the device's state;
	// Calls the HGCM functions called.
	Connected bool
	Closed    bool
	Calls     []uint32
}

// New returns a guest whose host holds props.
func New(t *testing.T, props map[string]string) *FakeGuest {
	return &FakeGuest{t: t, Props: props, Readonly: map[string]bool{}, Errno: map[uint32]error{}, RCs: map[uint32]int32{}, bufs: map[uint64][]byte{}, nextAddr: 0x10000}
}

// Addr hands out a fake address for buf, remembered for the calls.
func (f *FakeGuest) Addr(buf []byte) uint64 {
	a := f.nextAddr
	f.nextAddr += 0x10000
	f.bufs[a] = buf
	return a
}

// Close records that the device was closed.
func (f *FakeGuest) Close() error {
	f.Closed = true
	return nil
}

// Ioctl answers one vboxguest request as the driver and the host do.
func (f *FakeGuest) Ioctl(req uint32, msg []byte) error {
	le := binary.NativeEndian
	if req>>30 != 3 || (req>>8)&0xff != 'V' || (req>>16)&0x3fff != uint32(len(msg)) {
		f.t.Errorf("ioctl %#x with a %d-byte message: direction, type or size wrong", req, len(msg))
		return errors.New("EINVAL")
	}
	if err := f.Errno[req&0xff]; err != nil {
		return err
	}
	sizeIn, version, sizeOut := le.Uint32(msg[0:]), le.Uint32(msg[4:]), le.Uint32(msg[16:])
	if version != 0x10001 || max(sizeIn, sizeOut) != uint32(len(msg)) || sizeIn < 24 {
		f.t.Errorf("ioctl %#x header: size_in %d, version %#x, size_out %d for %d bytes", req, sizeIn, version, sizeOut, len(msg))
	}
	setRC := func(rc int32) {
		if o, ok := f.RCs[req&0xff]; ok {
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
		if rc, ok := f.RCs[4]; ok {
			setRC(rc)
			return nil
		}
		f.Connected = true
		le.PutUint32(msg[24:], 0x2a)
		setRC(0)
	case 5: // disconnect
		if le.Uint32(msg[24:]) != 0x2a || !f.Connected {
			f.t.Errorf("disconnect of client %#x", le.Uint32(msg[24:]))
		}
		f.Connected = false
		setRC(0)
	case 7: // HGCM call
		f.hgcm(msg)
		if o, ok := f.RCs[7]; ok {
			le.PutUint32(msg[12:], uint32(o))
		}
	default:
		f.t.Errorf("unexpected ioctl %#x", req)
	}
	return nil
}

func (f *FakeGuest) hgcm(msg []byte) {
	le := binary.NativeEndian
	client, fn, timeout := le.Uint32(msg[24:]), le.Uint32(msg[28:]), le.Uint32(msg[32:])
	n := int(le.Uint16(msg[38:]))
	if client != 0x2a || !f.Connected || timeout != 0xffffffff || msg[36] != 1 || len(msg) != 40+16*n {
		f.t.Errorf("HGCM call: client %#x, timeout %#x, interruptible %d, %d parameters in %d bytes", client, timeout, msg[36], n, len(msg))
	}
	f.Calls = append(f.Calls, fn)
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
		b := buf(0, 5 /* VMMDEV_HGCM_PARM_TYPE_LINADDR_IN */)
		s, rest, ok := bytes.Cut(b, []byte{0})
		if !ok || len(rest) != 0 {
			f.t.Errorf("property name %q is not exactly NUL-terminated", b)
		}
		return string(s)
	}
	rc := int32(0)
	switch fn {
	case 1 /* GUEST_PROP_FN_GET_PROP */ :
		if n != 4 {
			f.t.Fatalf("GET_PROP with %d parameters", n)
		}
		prop := name()
		out := buf(1, 4 /* VMMDEV_HGCM_PARM_TYPE_LINADDR */)
		if le.Uint32(param(2)) != 2 /* VMMDEV_HGCM_PARM_TYPE_64BIT */ || le.Uint32(param(3)) != 1 /* VMMDEV_HGCM_PARM_TYPE_32BIT */ {
			f.t.Errorf("GET_PROP timestamp/size parameters have the wrong types")
		}
		v, ok := f.Props[prop]
		if !ok {
			rc = -78 /* VERR_NOT_FOUND */
			break
		}
		if f.Grow {
			f.Props[prop] = v + strings.Repeat("x", 4096)
		}
		content := v + "\x00RDONLYGUEST\x00"
		if f.NoNUL {
			// A broken answer: the whole buffer without a NUL.
			content = strings.Repeat("x", len(out))
		}
		le.PutUint32(param(3)[4:], uint32(len(content)))
		if len(content) > len(out) {
			rc = -41 /* VERR_BUFFER_OVERFLOW */
			break
		}
		copy(out, content)
		le.PutUint64(param(2)[4:], uint64(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()))
	case 4 /* GUEST_PROP_FN_DEL_PROP */ :
		if n != 1 {
			f.t.Fatalf("DEL_PROP with %d parameters", n)
		}
		prop := name()
		if f.Readonly[prop] {
			rc = -10 /* VERR_PERMISSION_DENIED */
			break
		}
		delete(f.Props, prop)
	default:
		f.t.Errorf("HGCM function %d", fn)
	}
	le.PutUint32(msg[12:], uint32(rc))
}
