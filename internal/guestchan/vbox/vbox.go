package vbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
)

const (
	// DevicePath is the vboxguest driver's device.
	DevicePath  = "/dev/vboxguest"
	propService = "VBoxGuestPropSvc"

	// <linux/vboxguest.h>
	vbgIoctlHdrVersion = 0x10001
	vbgIOCVersion      = 0x00010000
	vbgHdrSize         = 24 // struct vbg_ioctl_hdr
	vbgCallHdrSize     = 40 // struct vbg_ioctl_hgcm_call
	vbgParamSize       = 16 // struct vmmdev_hgcm_function_parameter64
	vbgServiceNameSize = 128

	// <linux/vbox_vmmdev_types.h>
	vmmdevHGCMLocLocalhostExisting = 2
	hgcmParmType32Bit              = 1
	hgcmParmType64Bit              = 2
	hgcmParmTypeLinAddr            = 4
	hgcmParmTypeLinAddrIn          = 5

	// Guest property service functions (VBox/HostServices/GuestPropertySvc.h).
	guestPropFnGetProp = 1
	guestPropFnDelProp = 4

	// <linux/vbox_err.h>
	vinfSuccess          = 0
	verrPermissionDenied = -10
	verrBufferOverflow   = -41
	verrNotFound         = -78

	// maxProperty bounds a property buffer: the host limits values far
	// below this, so a larger size is a broken reply.
	maxProperty = 64 << 20
)

// vbgIOC is the kernel's _IOC(_IOC_READ|_IOC_WRITE, 'V', nr, size) in the
// asm-generic encoding, which every architecture VirtualBox runs (x86,
// arm64) uses.
func vbgIOC(nr, size uint32) uint32 {
	const iocReadWrite = 3
	return iocReadWrite<<30 | size<<16 | 'V'<<8 | nr
}

// The ioctls, with the sizes of their structures.
var (
	vbgIoctlDriverVersionInfo = vbgIOC(0, vbgHdrSize+20)
	vbgIoctlHGCMConnect       = vbgIOC(4, vbgHdrSize+4+vbgServiceNameSize)
	vbgIoctlHGCMDisconnect    = vbgIOC(5, vbgHdrSize+4)
)

func vbgIoctlHGCMCall64(size uint32) uint32 { return vbgIOC(7, size) }

// Device is an open /dev/vboxguest.
type Device interface {
	// Ioctl performs request req with msg as its argument, which the
	// driver reads and overwrites.
	Ioctl(req uint32, msg []byte) error
	// Addr returns the address the driver sees for buf, for a linear
	// address parameter; buf must stay referenced until the call is done.
	Addr(buf []byte) uint64
	// Close closes the device.
	Close() error
}

// StatusError is a VirtualBox status code (VERR_*) from the driver or
// the host.
type StatusError struct {
	op string
	rc int32
}

// Error names the status.
func (e *StatusError) Error() string {
	switch e.rc {
	case verrPermissionDenied:
		return fmt.Sprintf("%s: VERR_PERMISSION_DENIED (is the property read-only for the guest?)", e.op)
	case verrNotFound:
		return fmt.Sprintf("%s: VERR_NOT_FOUND", e.op)
	case verrBufferOverflow:
		return fmt.Sprintf("%s: VERR_BUFFER_OVERFLOW", e.op)
	}
	return fmt.Sprintf("%s: VirtualBox status %d (see <linux/vbox_err.h>)", e.op, e.rc)
}

// header fills the common header of a message of len(msg) bytes.
func header(msg []byte, sizeIn, sizeOut uint32) {
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], sizeIn)
	ne.PutUint32(msg[4:], vbgIoctlHdrVersion)
	ne.PutUint32(msg[8:], 0) // VBG_IOCTL_HDR_TYPE_DEFAULT
	ne.PutUint32(msg[12:], 0)
	ne.PutUint32(msg[16:], sizeOut)
}

// statusOf is the status the driver wrote into a message's header.
func statusOf(msg []byte) int32 { return int32(binary.NativeEndian.Uint32(msg[12:])) }

// versionInfoMsg is VBG_IOCTL_DRIVER_VERSION_INFO asking for version
// 1.0 of the interface, the one the mainline driver speaks.
func versionInfoMsg() []byte {
	msg := make([]byte, vbgHdrSize+20)
	header(msg, vbgHdrSize+16, vbgHdrSize+20)
	binary.NativeEndian.PutUint32(msg[24:], vbgIOCVersion) // req_version
	binary.NativeEndian.PutUint32(msg[28:], vbgIOCVersion) // min_version
	return msg
}

// connectMsg is VBG_IOCTL_HGCM_CONNECT to an existing host service.
func connectMsg(service string) []byte {
	msg := make([]byte, vbgHdrSize+4+vbgServiceNameSize)
	header(msg, uint32(len(msg)), vbgHdrSize+4)
	binary.NativeEndian.PutUint32(msg[24:], vmmdevHGCMLocLocalhostExisting)
	copy(msg[28:28+vbgServiceNameSize-1], service)
	return msg
}

// disconnectMsg is VBG_IOCTL_HGCM_DISCONNECT.
func disconnectMsg(client uint32) []byte {
	msg := make([]byte, vbgHdrSize+4)
	header(msg, vbgHdrSize+4, vbgHdrSize)
	binary.NativeEndian.PutUint32(msg[24:], client)
	return msg
}

// hgcmParam is one parameter of an HGCM call.
type hgcmParam struct {
	typ   uint32
	value uint64 // 32BIT/64BIT: the value
	buf   []byte // LINADDR*: the buffer
}

// callMsg is VBG_IOCTL_HGCM_CALL_64: the call header followed by the
// 64-bit parameter structures. A parameter's linear address is addr(buf).
func callMsg(client, function uint32, params []hgcmParam, addr func([]byte) uint64) []byte {
	ne := binary.NativeEndian
	msg := make([]byte, vbgCallHdrSize+vbgParamSize*len(params))
	header(msg, uint32(len(msg)), uint32(len(msg)))
	ne.PutUint32(msg[24:], client)
	ne.PutUint32(msg[28:], function)
	ne.PutUint32(msg[32:], 0xffffffff) // timeout_ms: wait as long as it takes
	msg[36] = 1                        // interruptible
	ne.PutUint16(msg[38:], uint16(len(params)))
	for i, p := range params {
		b := msg[vbgCallHdrSize+vbgParamSize*i:]
		ne.PutUint32(b[0:], p.typ)
		switch p.typ {
		case hgcmParmType32Bit:
			ne.PutUint32(b[4:], uint32(p.value))
		case hgcmParmType64Bit:
			ne.PutUint64(b[4:], p.value)
		default:
			ne.PutUint32(b[4:], uint32(len(p.buf)))
			if len(p.buf) > 0 {
				ne.PutUint64(b[8:], addr(p.buf))
			}
		}
	}
	return msg
}

// callParam32 returns the 32-bit value of parameter i of a call
// message as the host left it.
func callParam32(msg []byte, i int) uint32 {
	return binary.NativeEndian.Uint32(msg[vbgCallHdrSize+vbgParamSize*i+4:])
}

// GuestProps is a connection to the guest property service.
type GuestProps struct {
	dev    Device
	client uint32
}

// Connect negotiates the driver interface version and connects
// to the guest property service.
func Connect(dev Device) (*GuestProps, error) {
	msg := versionInfoMsg()
	if err := dev.Ioctl(vbgIoctlDriverVersionInfo, msg); err != nil {
		return nil, fmt.Errorf("VBG_IOCTL_DRIVER_VERSION_INFO: %w", err)
	}
	if rc := statusOf(msg); rc != vinfSuccess {
		return nil, &StatusError{op: "negotiating the vboxguest interface version", rc: rc}
	}
	msg = connectMsg(propService)
	if err := dev.Ioctl(vbgIoctlHGCMConnect, msg); err != nil {
		return nil, fmt.Errorf("VBG_IOCTL_HGCM_CONNECT: %w", err)
	}
	if rc := statusOf(msg); rc != vinfSuccess {
		return nil, &StatusError{op: "connecting to " + propService, rc: rc}
	}
	return &GuestProps{dev: dev, client: binary.NativeEndian.Uint32(msg[24:])}, nil
}

// Disconnect ends the connection.
func (g *GuestProps) Disconnect() error {
	msg := disconnectMsg(g.client)
	if err := g.dev.Ioctl(vbgIoctlHGCMDisconnect, msg); err != nil {
		return fmt.Errorf("VBG_IOCTL_HGCM_DISCONNECT: %w", err)
	}
	if rc := statusOf(msg); rc != vinfSuccess {
		return &StatusError{op: "disconnecting from " + propService, rc: rc}
	}
	return nil
}

// call performs one HGCM call and returns the message as the host left it.
func (g *GuestProps) call(function uint32, params []hgcmParam) ([]byte, int32, error) {
	msg := callMsg(g.client, function, params, g.dev.Addr)
	err := g.dev.Ioctl(vbgIoctlHGCMCall64(uint32(len(msg))), msg)
	// The driver reads and writes the buffers behind the parameters'
	// addresses until the ioctl returns.
	runtime.KeepAlive(params)
	if err != nil {
		return nil, 0, fmt.Errorf("VBG_IOCTL_HGCM_CALL: %w", err)
	}
	return msg, statusOf(msg), nil
}

// Get returns the value of a guest property, and ok false when the property
// does not exist. The host answers "value NUL flags NUL"; a buffer too
// small makes it answer VERR_BUFFER_OVERFLOW with the size it needs.
func (g *GuestProps) Get(name string) (value []byte, ok bool, err error) {
	cname := append([]byte(name), 0)
	size := uint32(1024)
	for range 5 {
		buf := make([]byte, size)
		msg, rc, err := g.call(guestPropFnGetProp, []hgcmParam{
			{typ: hgcmParmTypeLinAddrIn, buf: cname},
			{typ: hgcmParmTypeLinAddr, buf: buf},
			{typ: hgcmParmType64Bit},
			{typ: hgcmParmType32Bit},
		})
		if err != nil {
			return nil, false, fmt.Errorf("guest property %s: %w", name, err)
		}
		switch rc {
		case vinfSuccess:
			v, _, found := bytes.Cut(buf, []byte{0})
			if !found {
				return nil, false, fmt.Errorf("guest property %s: value is not NUL-terminated", name)
			}
			return v, true, nil
		case verrNotFound:
			return nil, false, nil
		case verrBufferOverflow:
			// The property may grow between two calls: retry with
			// what the host asked for, a few times.
			need := callParam32(msg, 3)
			if need <= size || need > maxProperty {
				return nil, false, fmt.Errorf("guest property %s: host asks for a %d-byte buffer after %d bytes were too small", name, need, size)
			}
			size = need
		default:
			return nil, false, &StatusError{op: "reading guest property " + name, rc: rc}
		}
	}
	return nil, false, fmt.Errorf("guest property %s: keeps growing while being read", name)
}

// Delete deletes a guest property; a property that does not exist is fine.
func (g *GuestProps) Delete(name string) error {
	_, rc, err := g.call(guestPropFnDelProp, []hgcmParam{
		{typ: hgcmParmTypeLinAddrIn, buf: append([]byte(name), 0)},
	})
	if err != nil {
		return fmt.Errorf("deleting guest property %s: %w", name, err)
	}
	if rc != vinfSuccess && rc != verrNotFound {
		return &StatusError{op: "deleting guest property " + name, rc: rc}
	}
	return nil
}
