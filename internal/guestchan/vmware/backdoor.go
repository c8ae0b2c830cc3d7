package vmware

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// The VMware backdoor (no official specification; the facts here are those
// of open-vm-tools' backdoor_def.h/message.c as documented by OpenBSD's
// vmt(4), iPXE's guestrpc.c and Ken Kato's "VMware Backdoor I/O Port"):
//
// A backdoor call loads EAX with the magic 0x564D5868 ("VMXh"), ECX with
// the command in its low half and a subcommand in its high half, DX with
// the port 0x5658, and executes IN EAX, DX. The VMX traps the instruction
// and answers in the registers. Command 0x1E is the message (GuestRPC)
// channel, whose subcommands open a channel (EBX = protocol | cookie flag;
// the reply has the channel number in EDX's high half and two cookies in
// ESI/EDI), send a message length then its bytes, receive a reply length
// then its bytes, acknowledge the reply, and close. Each reply carries a
// status in ECX's high half: SUCCESS, DORECV (a reply is waiting), CPT (the
// VM was checkpointed mid-message: start the message again), HB (the
// high-bandwidth port may be used).
//
// With HB, the message bytes move in one REP OUTSB / REP INSB on port
// 0x5659 instead of four bytes per call; EBX carries 0x00010000
// (BDOORHB_CMD_MESSAGE with SUCCESS in the high half) in and the status
// out, the cookies ride in EBP and ESI/EDI (whichever is not the buffer
// pointer).

const (
	bdoorMagic  = 0x564D5868
	bdoorPort   = 0x5658
	bdoorHBPort = 0x5659

	bdoorCmdGetVersion = 0x0a
	bdoorCmdMessage    = 0x1e

	// Message subcommands (ECX high half).
	msgOpen        = 0
	msgSendSize    = 1
	msgSendPayload = 2
	msgRecvSize    = 3
	msgRecvPayload = 4
	msgRecvStatus  = 5
	msgClose       = 6

	// Status bits (ECX high half of a reply; EBX high half for HB).
	msgStatusSuccess = 0x0001
	msgStatusDoRecv  = 0x0002
	msgStatusCPT     = 0x0010
	msgStatusHB      = 0x0080

	// msgFlagCookie asks for a cookie-protected channel.
	msgFlagCookie = 0x80000000
	// rpciProtocol opens a channel for guest-to-host RPCI commands.
	rpciProtocol = 0x49435052 // "RPCI"

	// bdoorHBMessage is EBX for a high-bandwidth message transfer.
	bdoorHBMessage = msgStatusSuccess << 16

	// msgMaxRetries bounds restarts after checkpoints: a VM is not
	// checkpointed over and over while one message is in flight.
	msgMaxRetries = 8
	// msgMaxReply bounds the buffer for a reply: guestinfo values are
	// limited by the VMX (1 MiB by default); 64 MiB means a broken reply.
	msgMaxReply = 64 << 20
)

// bdoorRegs is the register frame of one backdoor call. The layout is fixed:
// backdoor_linux_amd64.s indexes it.
type bdoorRegs struct {
	ax, bx, cx, dx, si, di, bp uint64
}

// backdoor executes backdoor calls. An error means the instruction could
// not be executed at all (it faulted); the VMX's answers are in r.
type backdoor interface {
	// call performs a low-bandwidth call: IN EAX, DX with the registers
	// of r (EAX..EDI), and stores the registers the VMX returns in r.
	call(r *bdoorRegs) error
	// hbOut sends buf with REP OUTSB on the high-bandwidth port; it sets
	// ESI to buf and ECX to its length, the caller sets the rest.
	hbOut(r *bdoorRegs, buf []byte) error
	// hbIn receives len(buf) bytes with REP INSB; it sets EDI to buf and
	// ECX to its length.
	hbIn(r *bdoorRegs, buf []byte) error
}

// bdoorChannel is an open message channel.
type bdoorChannel struct {
	bd               backdoor
	id               uint16
	cookie1, cookie2 uint32
}

// openChannel opens a message channel for protocol, with cookies when the
// VMX supports them (as open-vm-tools does, retrying without on refusal).
func openChannel(bd backdoor, protocol uint32) (*bdoorChannel, error) {
	for _, flags := range []uint32{msgFlagCookie, 0} {
		r := bdoorRegs{
			ax: bdoorMagic,
			bx: uint64(protocol | flags),
			cx: bdoorCmdMessage | msgOpen<<16,
			dx: bdoorPort,
		}
		if err := bd.call(&r); err != nil {
			return nil, err
		}
		if status(r.cx)&msgStatusSuccess == 0 {
			continue
		}
		return &bdoorChannel{bd: bd, id: uint16(r.dx >> 16), cookie1: uint32(r.si), cookie2: uint32(r.di)}, nil
	}
	return nil, fmt.Errorf("opening a message channel: %w", errMsgFailed)
}

// status is the high half of a 32-bit reply register.
func status(reg uint64) uint16 { return uint16(reg >> 16) }

// regs returns a frame for subcommand sub on this channel.
func (c *bdoorChannel) regs(sub uint16, bx uint32) bdoorRegs {
	return bdoorRegs{
		ax: bdoorMagic,
		bx: uint64(bx),
		cx: bdoorCmdMessage | uint64(sub)<<16,
		dx: uint64(c.id)<<16 | bdoorPort,
		si: uint64(c.cookie1),
		di: uint64(c.cookie2),
	}
}

// do performs subcommand sub and checks the reply's status.
func (c *bdoorChannel) do(sub uint16, bx uint32) (bdoorRegs, error) {
	r := c.regs(sub, bx)
	if err := c.bd.call(&r); err != nil {
		return r, err
	}
	st := status(r.cx)
	if st&msgStatusSuccess == 0 {
		if st&msgStatusCPT != 0 {
			return r, errMsgCheckpoint
		}
		return r, fmt.Errorf("%w (subcommand %d, status %#04x)", errMsgFailed, sub, st)
	}
	return r, nil
}

// send sends one message, starting again after a checkpoint.
func (c *bdoorChannel) send(msg []byte) error {
	for range msgMaxRetries {
		err := c.sendOnce(msg)
		if !errors.Is(err, errMsgCheckpoint) {
			return err
		}
	}
	return fmt.Errorf("sending a message: %w, %d times", errMsgCheckpoint, msgMaxRetries)
}

func (c *bdoorChannel) sendOnce(msg []byte) error {
	r, err := c.do(msgSendSize, uint32(len(msg)))
	if err != nil {
		return fmt.Errorf("sending the message size: %w", err)
	}
	if len(msg) == 0 {
		return nil
	}
	if status(r.cx)&msgStatusHB != 0 {
		hb := bdoorRegs{
			ax: bdoorMagic,
			bx: bdoorHBMessage,
			dx: uint64(c.id)<<16 | bdoorHBPort,
			bp: uint64(c.cookie1),
			di: uint64(c.cookie2),
		}
		if err := c.bd.hbOut(&hb, msg); err != nil {
			return err
		}
		if st := status(hb.bx); st&msgStatusSuccess == 0 {
			if st&msgStatusCPT != 0 {
				return errMsgCheckpoint
			}
			return fmt.Errorf("sending the message: %w (high-bandwidth status %#04x)", errMsgFailed, st)
		}
		return nil
	}
	for i := 0; i < len(msg); i += 4 {
		var word [4]byte
		copy(word[:], msg[i:])
		if _, err := c.do(msgSendPayload, binary.LittleEndian.Uint32(word[:])); err != nil {
			return fmt.Errorf("sending the message at byte %d: %w", i, err)
		}
	}
	return nil
}

// receive receives the reply to the last message; nil when there is none.
func (c *bdoorChannel) receive() ([]byte, error) {
	for range msgMaxRetries {
		reply, err := c.receiveOnce()
		if !errors.Is(err, errMsgCheckpoint) {
			return reply, err
		}
	}
	return nil, fmt.Errorf("receiving a reply: %w, %d times", errMsgCheckpoint, msgMaxRetries)
}

func (c *bdoorChannel) receiveOnce() ([]byte, error) {
	r, err := c.do(msgRecvSize, 0)
	if err != nil {
		return nil, fmt.Errorf("receiving the reply size: %w", err)
	}
	st := status(r.cx)
	if st&msgStatusDoRecv == 0 {
		return nil, nil
	}
	size := uint32(r.bx)
	if size > msgMaxReply {
		return nil, fmt.Errorf("reply of %d bytes is larger than %d: %w", size, msgMaxReply, errMsgFailed)
	}
	// The reply id (EDX high half) is echoed in EBX by the payload and
	// status calls.
	id := uint32(status(r.dx))
	reply := make([]byte, size)
	if size > 0 {
		if st&msgStatusHB != 0 {
			hb := bdoorRegs{
				ax: bdoorMagic,
				bx: bdoorHBMessage,
				dx: uint64(c.id)<<16 | bdoorHBPort,
				si: uint64(c.cookie1),
				bp: uint64(c.cookie2),
			}
			if err := c.bd.hbIn(&hb, reply); err != nil {
				return nil, err
			}
			if st := status(hb.bx); st&msgStatusSuccess == 0 {
				if st&msgStatusCPT != 0 {
					return nil, errMsgCheckpoint
				}
				return nil, fmt.Errorf("receiving the reply: %w (high-bandwidth status %#04x)", errMsgFailed, st)
			}
		} else {
			for i := 0; i < len(reply); i += 4 {
				r, err := c.do(msgRecvPayload, id)
				if err != nil {
					return nil, fmt.Errorf("receiving the reply at byte %d: %w", i, err)
				}
				var word [4]byte
				binary.LittleEndian.PutUint32(word[:], uint32(r.bx))
				copy(reply[i:], word[:])
			}
		}
	}
	if _, err := c.do(msgRecvStatus, id); err != nil {
		return nil, fmt.Errorf("acknowledging the reply: %w", err)
	}
	return reply, nil
}

// close closes the channel.
func (c *bdoorChannel) close() error {
	if _, err := c.do(msgClose, 0); err != nil {
		return fmt.Errorf("closing the message channel: %w", err)
	}
	return nil
}

// backdoorRPC is the RPC of the real VMX: one channel per command,
// as RPCI is meant to be used.
type backdoorRPC struct {
	bd backdoor
}

func (b backdoorRPC) Call(ctx context.Context, cmd string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch, err := openChannel(b.bd, rpciProtocol)
	if err != nil {
		return nil, err
	}
	if err := ch.send([]byte(cmd)); err != nil {
		_ = ch.close()
		return nil, err
	}
	reply, err := ch.receive()
	if err != nil {
		_ = ch.close()
		return nil, err
	}
	if err := ch.close(); err != nil {
		return nil, err
	}
	return reply, nil
}
