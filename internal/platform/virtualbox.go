package platform

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// The virtualbox platform reads the config from the guest property
// /Ignition/Config, which the operator sets with
//
//	VBoxManage guestproperty set <vm> /Ignition/Config "$(cat config.ign)"
//
// /Ignition/Config/Encoding is reserved for a future encoding and must be
// empty (coreos/ignition internal/providers/virtualbox/virtualbox.go).
//
// Guest properties live in the host's guest property service. The guest
// reaches it through the vboxguest driver (/dev/vboxguest, in mainline
// Linux since 4.16): an HGCM connect to the "VBoxGuestPropSvc" service, a
// GET_PROP call, a disconnect. The messages are the structures of
// <linux/vboxguest.h> and <linux/vbox_vmmdev_types.h>; this file encodes
// and decodes them as bytes, and virtualbox_linux.go only performs the
// ioctls.

const (
	vboxConfigProperty   = "/Ignition/Config"
	vboxEncodingProperty = "/Ignition/Config/Encoding"
	vboxDevicePath       = "/dev/vboxguest"
	vboxPropService      = "VBoxGuestPropSvc"

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

	// vboxMaxProperty bounds a property buffer: the host limits values far
	// below this, so a larger size is a broken reply.
	vboxMaxProperty = 64 << 20
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

// vboxDevice is an open /dev/vboxguest.
type vboxDevice interface {
	// ioctl performs request req with msg as its argument, which the
	// driver reads and overwrites.
	ioctl(req uint32, msg []byte) error
	// addr returns the address the driver sees for buf, for a linear
	// address parameter; buf must stay referenced until the call is done.
	addr(buf []byte) uint64
	close() error
}

// vboxStatusError is a VirtualBox status code (VERR_*) from the driver or
// the host.
type vboxStatusError struct {
	op string
	rc int32
}

func (e *vboxStatusError) Error() string {
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

// vbgHeader fills the common header of a message of len(msg) bytes.
func vbgHeader(msg []byte, sizeIn, sizeOut uint32) {
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], sizeIn)
	ne.PutUint32(msg[4:], vbgIoctlHdrVersion)
	ne.PutUint32(msg[8:], 0) // VBG_IOCTL_HDR_TYPE_DEFAULT
	ne.PutUint32(msg[12:], 0)
	ne.PutUint32(msg[16:], sizeOut)
}

// vbgRC is the status the driver wrote into a message's header.
func vbgRC(msg []byte) int32 { return int32(binary.NativeEndian.Uint32(msg[12:])) }

// vboxVersionInfoMsg is VBG_IOCTL_DRIVER_VERSION_INFO asking for version
// 1.0 of the interface, the one the mainline driver speaks.
func vboxVersionInfoMsg() []byte {
	msg := make([]byte, vbgHdrSize+20)
	vbgHeader(msg, vbgHdrSize+16, vbgHdrSize+20)
	binary.NativeEndian.PutUint32(msg[24:], vbgIOCVersion) // req_version
	binary.NativeEndian.PutUint32(msg[28:], vbgIOCVersion) // min_version
	return msg
}

// vboxConnectMsg is VBG_IOCTL_HGCM_CONNECT to an existing host service.
func vboxConnectMsg(service string) []byte {
	msg := make([]byte, vbgHdrSize+4+vbgServiceNameSize)
	vbgHeader(msg, uint32(len(msg)), vbgHdrSize+4)
	binary.NativeEndian.PutUint32(msg[24:], vmmdevHGCMLocLocalhostExisting)
	copy(msg[28:28+vbgServiceNameSize-1], service)
	return msg
}

// vboxDisconnectMsg is VBG_IOCTL_HGCM_DISCONNECT.
func vboxDisconnectMsg(client uint32) []byte {
	msg := make([]byte, vbgHdrSize+4)
	vbgHeader(msg, vbgHdrSize+4, vbgHdrSize)
	binary.NativeEndian.PutUint32(msg[24:], client)
	return msg
}

// hgcmParam is one parameter of an HGCM call.
type hgcmParam struct {
	typ   uint32
	value uint64 // 32BIT/64BIT: the value
	buf   []byte // LINADDR*: the buffer
}

// vboxCallMsg is VBG_IOCTL_HGCM_CALL_64: the call header followed by the
// 64-bit parameter structures. A parameter's linear address is addr(buf).
func vboxCallMsg(client, function uint32, params []hgcmParam, addr func([]byte) uint64) []byte {
	ne := binary.NativeEndian
	msg := make([]byte, vbgCallHdrSize+vbgParamSize*len(params))
	vbgHeader(msg, uint32(len(msg)), uint32(len(msg)))
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

// vboxCallParam32 returns the 32-bit value of parameter i of a call
// message as the host left it.
func vboxCallParam32(msg []byte, i int) uint32 {
	return binary.NativeEndian.Uint32(msg[vbgCallHdrSize+vbgParamSize*i+4:])
}

// vboxGuestProps is a connection to the guest property service.
type vboxGuestProps struct {
	dev    vboxDevice
	client uint32
}

// connectGuestProps negotiates the driver interface version and connects
// to the guest property service.
func connectGuestProps(dev vboxDevice) (*vboxGuestProps, error) {
	msg := vboxVersionInfoMsg()
	if err := dev.ioctl(vbgIoctlDriverVersionInfo, msg); err != nil {
		return nil, fmt.Errorf("VBG_IOCTL_DRIVER_VERSION_INFO: %w", err)
	}
	if rc := vbgRC(msg); rc != vinfSuccess {
		return nil, &vboxStatusError{op: "negotiating the vboxguest interface version", rc: rc}
	}
	msg = vboxConnectMsg(vboxPropService)
	if err := dev.ioctl(vbgIoctlHGCMConnect, msg); err != nil {
		return nil, fmt.Errorf("VBG_IOCTL_HGCM_CONNECT: %w", err)
	}
	if rc := vbgRC(msg); rc != vinfSuccess {
		return nil, &vboxStatusError{op: "connecting to " + vboxPropService, rc: rc}
	}
	return &vboxGuestProps{dev: dev, client: binary.NativeEndian.Uint32(msg[24:])}, nil
}

func (g *vboxGuestProps) disconnect() error {
	msg := vboxDisconnectMsg(g.client)
	if err := g.dev.ioctl(vbgIoctlHGCMDisconnect, msg); err != nil {
		return fmt.Errorf("VBG_IOCTL_HGCM_DISCONNECT: %w", err)
	}
	if rc := vbgRC(msg); rc != vinfSuccess {
		return &vboxStatusError{op: "disconnecting from " + vboxPropService, rc: rc}
	}
	return nil
}

// call performs one HGCM call and returns the message as the host left it.
func (g *vboxGuestProps) call(function uint32, params []hgcmParam) ([]byte, int32, error) {
	msg := vboxCallMsg(g.client, function, params, g.dev.addr)
	err := g.dev.ioctl(vbgIoctlHGCMCall64(uint32(len(msg))), msg)
	// The driver reads and writes the buffers behind the parameters'
	// addresses until the ioctl returns.
	runtime.KeepAlive(params)
	if err != nil {
		return nil, 0, fmt.Errorf("VBG_IOCTL_HGCM_CALL: %w", err)
	}
	return msg, vbgRC(msg), nil
}

// get returns the value of a guest property, and ok false when the property
// does not exist. The host answers "value NUL flags NUL"; a buffer too
// small makes it answer VERR_BUFFER_OVERFLOW with the size it needs.
func (g *vboxGuestProps) get(name string) (value []byte, ok bool, err error) {
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
			need := vboxCallParam32(msg, 3)
			if need <= size || need > vboxMaxProperty {
				return nil, false, fmt.Errorf("guest property %s: host asks for a %d-byte buffer after %d bytes were too small", name, need, size)
			}
			size = need
		default:
			return nil, false, &vboxStatusError{op: "reading guest property " + name, rc: rc}
		}
	}
	return nil, false, fmt.Errorf("guest property %s: keeps growing while being read", name)
}

// del deletes a guest property; a property that does not exist is fine.
func (g *vboxGuestProps) del(name string) error {
	_, rc, err := g.call(guestPropFnDelProp, []hgcmParam{
		{typ: hgcmParmTypeLinAddrIn, buf: append([]byte(name), 0)},
	})
	if err != nil {
		return fmt.Errorf("deleting guest property %s: %w", name, err)
	}
	if rc != vinfSuccess && rc != verrNotFound {
		return &vboxStatusError{op: "deleting guest property " + name, rc: rc}
	}
	return nil
}

// virtualboxProvider reads the config from a VirtualBox guest property.
type virtualboxProvider struct {
	env Env
	// open opens the vboxguest device (virtualbox_linux.go).
	open func(path string) (vboxDevice, error)
}

func newVirtualBox(env Env) Provider {
	return &virtualboxProvider{env: env, open: openVBoxGuest}
}

// connect waits for the vboxguest device (udev creates it when the PCI
// VMMDev is probed) and connects to the guest property service. No device
// means this is not a VirtualBox VM: ErrNoProvider.
func (p *virtualboxProvider) connect(ctx context.Context) (*vboxGuestProps, func(), error) {
	path := p.env.path(vboxDevicePath)
	if err := waitForPath(ctx, path, p.env.wait(10*time.Second)); err != nil {
		return nil, nil, fmt.Errorf("virtualbox: no %s (not a VirtualBox VM, or no vboxguest driver): %w", vboxDevicePath, err)
	}
	dev, err := p.open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("virtualbox: opening %s: %w", vboxDevicePath, err)
	}
	gp, err := connectGuestProps(dev)
	if err != nil {
		dev.close()
		return nil, nil, fmt.Errorf("virtualbox: %w", err)
	}
	return gp, func() {
		if err := gp.disconnect(); err != nil {
			p.env.logger().Warn("virtualbox: disconnecting from the guest property service", "error", err)
		}
		dev.close()
	}, nil
}

// FetchConfig returns the config in /Ignition/Config; ErrNoConfig when the
// property does not exist or is empty.
func (p *virtualboxProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	gp, done, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	log := p.env.logger().With("op", "virtualbox guest property")

	// A future encoding would be announced here; refuse what we cannot
	// decode rather than hand the engine garbage.
	encoding, _, err := gp.get(vboxEncodingProperty)
	if err != nil {
		return nil, fmt.Errorf("virtualbox: %w", err)
	}
	if len(encoding) > 0 {
		return nil, fmt.Errorf("virtualbox: unsupported %s value %q", vboxEncodingProperty, encoding)
	}
	config, ok, err := gp.get(vboxConfigProperty)
	if err != nil {
		return nil, fmt.Errorf("virtualbox: %w", err)
	}
	if !ok || len(config) == 0 {
		log.Info("no config: the guest property is not set", "property", vboxConfigProperty)
		return nil, ErrNoConfig
	}
	log.Info("config read", "property", vboxConfigProperty, "bytes", len(config))
	return config, nil
}

// DeleteConfig deletes /Ignition/Config/Encoding and /Ignition/Config, so
// the config (which can hold secrets) is gone after the first boot. It
// fails when the host made them read-only for the guest.
func (p *virtualboxProvider) DeleteConfig(ctx context.Context) error {
	gp, done, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	p.env.logger().Info("deleting the config guest properties", "op", "virtualbox delete config")
	for _, name := range []string{vboxEncodingProperty, vboxConfigProperty} {
		if err := gp.del(name); err != nil {
			return fmt.Errorf("virtualbox: %w", err)
		}
	}
	return nil
}

var errVBoxUnsupported = errors.New("VirtualBox guest properties need linux on a 64-bit architecture")
