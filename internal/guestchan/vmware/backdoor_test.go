package vmware

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/guestchan/vmware/vmwaretest"
)

// fakeVMX plays the hypervisor's side of the backdoor message protocol
// (backdoor.go) and answers RPCI commands with handle.
type fakeVMX struct {
	t *testing.T
	// hb offers the high-bandwidth port; cookies accepts the cookie flag.
	hb, cookies bool
	// cpt makes the next n calls of a subcommand fail with a checkpoint.
	cpt map[uint16]int
	// fault makes every instruction fail, as a #GP outside VMware would.
	fault  error
	handle func(cmd string) string

	channels map[uint16]*fakeVMXChannel
	nextID   uint16
	// opened counts channels opened; cmds records the commands received.
	opened int
	cmds   []string
}

type fakeVMXChannel struct {
	cookie1, cookie2 uint32
	sendSize         uint32
	sending          bool
	sent             []byte
	reply            []byte
	replyReady       bool
	replyPos         int
}

func newFakeVMX(t *testing.T, hb bool, handle func(string) string) *fakeVMX {
	return &fakeVMX{t: t, hb: hb, cookies: true, handle: handle, channels: map[uint16]*fakeVMXChannel{}, nextID: 7, cpt: map[uint16]int{}}
}

func (v *fakeVMX) ok(r *bdoorRegs, extra uint16) {
	r.cx = uint64(msgStatusSuccess|extra) << 16
}

func (v *fakeVMX) call(r *bdoorRegs) error {
	if v.fault != nil {
		return v.fault
	}
	if r.ax != bdoorMagic || r.dx&0xffff != bdoorPort {
		v.t.Errorf("backdoor call with EAX %#x, DX %#x: want magic and port %#x", r.ax, r.dx, bdoorPort)
		r.cx = 0
		return nil
	}
	cmd, sub := uint16(r.cx), uint16(r.cx>>16)
	if cmd == bdoorCmdGetVersion {
		r.ax, r.bx = 6, bdoorMagic
		return nil
	}
	if cmd != bdoorCmdMessage {
		v.t.Errorf("backdoor command %#x, want message", cmd)
		return nil
	}
	if sub == msgOpen {
		proto := uint32(r.bx) &^ msgFlagCookie
		withCookie := uint32(r.bx)&msgFlagCookie != 0
		if proto != rpciProtocol || (withCookie && !v.cookies) {
			r.cx = 0
			return nil
		}
		ch := &fakeVMXChannel{}
		if withCookie {
			ch.cookie1, ch.cookie2 = 0xc0c0a001, 0xc0c0a002
		}
		id := v.nextID
		v.nextID++
		v.channels[id] = ch
		v.opened++
		r.dx = uint64(id) << 16
		r.si, r.di = uint64(ch.cookie1), uint64(ch.cookie2)
		v.ok(r, 0)
		return nil
	}
	id := uint16(r.dx >> 16)
	ch := v.channels[id]
	if ch == nil || uint32(r.si) != ch.cookie1 || uint32(r.di) != ch.cookie2 {
		v.t.Errorf("subcommand %d on channel %d with cookies %#x/%#x: no such channel", sub, id, r.si, r.di)
		r.cx = 0
		return nil
	}
	if v.cpt[sub] > 0 {
		v.cpt[sub]--
		// The VM was checkpointed: the message in flight is lost.
		ch.sending, ch.sent = false, nil
		ch.replyPos = 0
		r.cx = msgStatusCPT << 16
		return nil
	}
	hb := uint16(0)
	if v.hb {
		hb = msgStatusHB
	}
	switch sub {
	case msgSendSize:
		ch.sendSize, ch.sent, ch.sending = uint32(r.bx), nil, true
		if ch.sendSize == 0 {
			v.process(ch)
		}
		v.ok(r, hb)
	case msgSendPayload:
		if !ch.sending {
			v.t.Errorf("payload without a size")
			r.cx = 0
			return nil
		}
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], uint32(r.bx))
		n := min(4, int(ch.sendSize)-len(ch.sent))
		ch.sent = append(ch.sent, w[:n]...)
		if len(ch.sent) == int(ch.sendSize) {
			v.process(ch)
		}
		v.ok(r, 0)
	case msgRecvSize:
		if !ch.replyReady {
			v.ok(r, 0)
			return nil
		}
		r.bx = uint64(len(ch.reply))
		r.dx = 1 << 16 // MESSAGE_TYPE_SENDSIZE: the reply id
		ch.replyPos = 0
		v.ok(r, msgStatusDoRecv|hb)
	case msgRecvPayload:
		if uint32(r.bx) != 1 {
			v.t.Errorf("receive payload with EBX %#x, want the reply id 1", r.bx)
		}
		var w [4]byte
		copy(w[:], ch.reply[ch.replyPos:])
		ch.replyPos += 4
		r.bx = uint64(binary.LittleEndian.Uint32(w[:]))
		r.dx = 2 << 16
		v.ok(r, 0)
	case msgRecvStatus:
		ch.reply, ch.replyReady = nil, false
		v.ok(r, 0)
	case msgClose:
		delete(v.channels, id)
		v.ok(r, 0)
	default:
		v.t.Errorf("unknown subcommand %d", sub)
		r.cx = 0
	}
	return nil
}

func (v *fakeVMX) process(ch *fakeVMXChannel) {
	ch.sending = false
	cmd := string(ch.sent)
	v.cmds = append(v.cmds, cmd)
	ch.reply, ch.replyReady = []byte(v.handle(cmd)), true
}

func (v *fakeVMX) hbChannel(r *bdoorRegs, cookie1, cookie2 uint64) *fakeVMXChannel {
	if !v.hb {
		v.t.Errorf("high-bandwidth transfer although the VMX did not offer it")
	}
	if r.ax != bdoorMagic || r.bx != bdoorHBMessage || r.dx&0xffff != bdoorHBPort {
		v.t.Errorf("high-bandwidth call with EAX %#x EBX %#x DX %#x", r.ax, r.bx, r.dx)
	}
	ch := v.channels[uint16(r.dx>>16)]
	if ch == nil || uint32(cookie1) != ch.cookie1 || uint32(cookie2) != ch.cookie2 {
		v.t.Errorf("high-bandwidth call on channel %d with cookies %#x/%#x: no such channel", r.dx>>16, cookie1, cookie2)
		return nil
	}
	return ch
}

func (v *fakeVMX) hbOut(r *bdoorRegs, buf []byte) error {
	if v.fault != nil {
		return v.fault
	}
	ch := v.hbChannel(r, r.bp, r.di)
	if ch == nil {
		r.bx = 0
		return nil
	}
	if v.cpt[msgSendPayload] > 0 {
		v.cpt[msgSendPayload]--
		ch.sending, ch.sent = false, nil
		r.bx = msgStatusCPT << 16
		return nil
	}
	ch.sent = append(ch.sent, buf...)
	if len(ch.sent) == int(ch.sendSize) {
		v.process(ch)
	}
	r.bx = msgStatusSuccess << 16
	return nil
}

func (v *fakeVMX) hbIn(r *bdoorRegs, buf []byte) error {
	if v.fault != nil {
		return v.fault
	}
	ch := v.hbChannel(r, r.si, r.bp)
	if ch == nil {
		r.bx = 0
		return nil
	}
	if len(buf) != len(ch.reply) {
		v.t.Errorf("high-bandwidth receive of %d bytes, reply has %d", len(buf), len(ch.reply))
	}
	copy(buf, ch.reply)
	r.bx = msgStatusSuccess << 16
	return nil
}

func TestBackdoorRPC(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 300) + "xyz"
	tests := []struct {
		name    string
		hb      bool
		cookies bool
		cpt     map[uint16]int
		cmd     string
		reply   string
	}{
		{name: "low bandwidth, short", cmd: "info-get guestinfo.a", reply: "1 b"},
		{name: "low bandwidth, lengths not multiples of 4", cmd: "info-get guestinfo.abc", reply: "1 value"},
		{name: "low bandwidth, empty reply", cmd: "ping", reply: ""},
		{name: "low bandwidth, empty command", cmd: "", reply: "0 Unknown command"},
		{name: "low bandwidth, long", cmd: "info-set guestinfo.x " + long, reply: "1 " + long},
		{name: "high bandwidth", hb: true, cmd: "info-get guestinfo.a", reply: "1 " + long},
		{name: "high bandwidth, empty reply", hb: true, cmd: "ping", reply: ""},
		{name: "no cookies", cookies: false, cmd: "info-get guestinfo.a", reply: "1 b"},
		{name: "checkpoint while sending", cpt: map[uint16]int{msgSendPayload: 2}, cmd: "info-get guestinfo.key", reply: "1 b"},
		{name: "checkpoint while receiving", cpt: map[uint16]int{msgRecvPayload: 1, msgRecvStatus: 1}, cmd: "info-get guestinfo.key", reply: "1 value"},
		{name: "checkpoint high bandwidth", hb: true, cpt: map[uint16]int{msgSendPayload: 1, msgSendSize: 1}, cmd: "info-get guestinfo.key", reply: "1 value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmx := newFakeVMX(t, tt.hb, func(cmd string) string {
				if cmd != tt.cmd {
					t.Errorf("VMX received %q, want %q", cmd, tt.cmd)
				}
				return tt.reply
			})
			vmx.cookies = tt.name != "no cookies"
			for k, v := range tt.cpt {
				vmx.cpt[k] = v
			}
			got, err := backdoorRPC{bd: vmx}.Call(context.Background(), tt.cmd)
			if err != nil {
				t.Fatalf("Call(%q) error: %v", tt.cmd, err)
			}
			if string(got) != tt.reply {
				t.Errorf("Call(%q) = %q, want %q", tt.cmd, got, tt.reply)
			}
			if len(vmx.channels) != 0 {
				t.Errorf("%d channels left open", len(vmx.channels))
			}
			for sub, n := range vmx.cpt {
				if n != 0 {
					t.Errorf("%d checkpoints at subcommand %d never happened", n, sub)
				}
			}
			if vmx.opened != 1 {
				t.Errorf("opened %d channels for one command, want 1", vmx.opened)
			}
		})
	}
}

func TestBackdoorRPCErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("fault", func(t *testing.T) {
		vmx := newFakeVMX(t, false, vmwaretest.Guestinfo(nil))
		vmx.fault = fmt.Errorf("faulted: %w", ErrUnreachable)
		if _, err := (backdoorRPC{bd: vmx}).Call(ctx, "x"); !errors.Is(err, ErrUnreachable) {
			t.Errorf("Call on a faulting backdoor = %v, want ErrUnreachable", err)
		}
	})
	t.Run("open refused", func(t *testing.T) {
		vmx := newFakeVMX(t, false, vmwaretest.Guestinfo(nil))
		if _, err := openChannel(vmx, 0x1234); !errors.Is(err, errMsgFailed) {
			t.Errorf("openChannel(unknown protocol) = %v, want errMsgFailed", err)
		}
	})
	t.Run("endless checkpoints", func(t *testing.T) {
		vmx := newFakeVMX(t, false, vmwaretest.Guestinfo(nil))
		vmx.cpt[msgSendSize] = 100
		_, err := backdoorRPC{bd: vmx}.Call(ctx, "info-get guestinfo.a")
		if !errors.Is(err, errMsgCheckpoint) {
			t.Errorf("Call with endless checkpoints = %v, want errMsgCheckpoint", err)
		}
		if len(vmx.channels) != 0 {
			t.Errorf("%d channels left open after an error", len(vmx.channels))
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		vmx := newFakeVMX(t, false, vmwaretest.Guestinfo(nil))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := (backdoorRPC{bd: vmx}).Call(cctx, "x"); !errors.Is(err, context.Canceled) {
			t.Errorf("Call with a cancelled context = %v, want context.Canceled", err)
		}
	})
}
