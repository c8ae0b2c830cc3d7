// Package tftp is a small TFTP client (RFC 1350) for fetching configs and
// files at boot from a PXE server: read requests only, octet mode, with the
// block size and transfer size options (RFC 2347 option negotiation, RFC
// 2348 blksize, RFC 2349 tsize). Block numbers wrap past 65535, so a file of
// any size can be read with any block size.
//
// Family: config sources, platforms and agent (internal/README.md).
package tftp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Opcodes (RFC 1350 section 5, RFC 2347).
const (
	opRRQ   = 1
	opWRQ   = 2
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// Error codes a server can send (RFC 1350 appendix, RFC 2347).
const (
	CodeUndefined         = 0
	CodeFileNotFound      = 1
	CodeAccessViolation   = 2
	CodeDiskFull          = 3
	CodeIllegalOperation  = 4
	CodeUnknownTID        = 5
	CodeFileExists        = 6
	CodeNoSuchUser        = 7
	CodeOptionNegotiation = 8
)

// DefaultPort is TFTP's well-known port.
const DefaultPort = 69

// Block sizes: RFC 1350 fixes 512; RFC 2348 allows 8 to 65464. The default
// request fills an Ethernet frame (1500 bytes MTU) without IP
// fragmentation, for IPv6's 40-byte header as well as IPv4's 20.
const (
	minBlockSize     = 8
	maxBlockSize     = 65464
	plainBlockSize   = 512
	DefaultBlockSize = 1500 - 40 - 8 - 4
)

// Error is an ERROR packet from the server.
type Error struct {
	Code    uint16
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("tftp server error %d: %s", e.Code, e.Message)
}

// ErrTimeout means the server stopped answering: a packet was sent
// Retries+1 times without a reply.
var ErrTimeout = errors.New("tftp server did not answer")

// Client reads files from TFTP servers. The zero value is usable.
type Client struct {
	// Timeout is how long to wait for a packet before sending the last one
	// again; 0 means 5 seconds.
	Timeout time.Duration
	// Retries is how often a packet is sent again before giving up; 0
	// means 5.
	Retries int
	// BlockSize is the block size to ask for; 0 means DefaultBlockSize and
	// a negative value asks for no options at all (plain RFC 1350).
	BlockSize int
}

// Get reads file from the server at addr (host:port) and writes it to w. It
// returns how many bytes were written. A server that refuses the options
// is asked again without them.
func (c *Client) Get(ctx context.Context, addr, file string, w io.Writer) (int64, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return 0, fmt.Errorf("tftp %s: %w", addr, err)
	}
	blksize := c.BlockSize
	if blksize == 0 {
		blksize = DefaultBlockSize
	}
	if blksize > 0 && (blksize < minBlockSize || blksize > maxBlockSize) {
		return 0, fmt.Errorf("tftp: block size %d outside %d..%d", blksize, minBlockSize, maxBlockSize)
	}
	n, err := c.get(ctx, raddr, file, blksize, w)
	var te *Error
	if n == 0 && blksize > 0 && errors.As(err, &te) && te.Code == CodeOptionNegotiation {
		// RFC 2347: a server that does not accept the options may refuse
		// the request; a plain one must then be sent.
		n, err = c.get(ctx, raddr, file, -1, w)
	}
	if err != nil {
		return n, fmt.Errorf("tftp %s %s: %w", addr, file, err)
	}
	return n, nil
}

// packetWriter sends a datagram; *net.UDPConn is one, and the tests'
// recorder another.
type packetWriter interface {
	WriteToUDP(b []byte, addr *net.UDPAddr) (int, error)
}

// transfer is one read request's state.
type transfer struct {
	c       *Client
	conn    *net.UDPConn // receives; nil in tests that hand packets to handle
	out     packetWriter // sends
	server  *net.UDPAddr // the request goes here; the transfer's TID is learned from the reply
	peer    *net.UDPAddr // nil until the first reply
	last    []byte       // the packet to send again on a timeout
	buf     []byte
	asked   int // the block size requested, or -1 for a request without options
	blksize int // the block size in force: 512 until an OACK says otherwise
	w       io.Writer

	written  int64
	expect   uint16 // the next DATA block
	tsize    int64  // the size the server announced, -1 for none
	accepted bool   // an OACK or the first DATA came
}

// newTransfer returns the state of a read request for file that asks for
// block size blksize (-1: no options), sending through out to server.
func newTransfer(c *Client, out packetWriter, server *net.UDPAddr, file string, blksize int, w io.Writer) *transfer {
	return &transfer{
		c: c, out: out, server: server, w: w,
		last:    rrq(file, blksize),
		asked:   blksize,
		blksize: plainBlockSize,
		expect:  1,
		tsize:   -1,
		// The receive buffer holds the largest DATA packet the options
		// could lead to, so a server that ignores the size asked for is
		// caught.
		buf: make([]byte, 4+max(blksize, plainBlockSize)+1),
	}
}

func (c *Client) get(ctx context.Context, raddr *net.UDPAddr, file string, blksize int, w io.Writer) (int64, error) {
	conn, err := net.ListenUDP("udp", nil)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// Closing the socket ends a blocked read at once when ctx is done.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	t := newTransfer(c, conn, raddr, file, blksize, w)
	t.conn = conn
	if _, err := conn.WriteToUDP(t.last, raddr); err != nil {
		return 0, err
	}
	for {
		op, pkt, err := t.receive(ctx)
		if err != nil {
			return t.written, err
		}
		done, err := t.handle(op, pkt)
		if err != nil || done {
			return t.written, err
		}
	}
}

// handle acts on one packet from the peer: opcode op, the rest pkt. done
// means the file is complete.
func (t *transfer) handle(op uint16, pkt []byte) (done bool, err error) {
	switch op {
	case opOACK:
		if t.accepted {
			if t.expect == 1 && t.peer != nil {
				// A duplicate: our ACK 0 was lost.
				return false, t.send(t.last)
			}
			return false, nil
		}
		if t.asked < 0 {
			return false, t.abort(CodeOptionNegotiation, "no options were requested", errors.New("server sent options that were not requested"))
		}
		opts, err := parseOptions(pkt)
		if err != nil {
			return false, t.abort(CodeOptionNegotiation, err.Error(), err)
		}
		if v, ok := opts["blksize"]; ok {
			n, err := strconv.Atoi(v)
			// RFC 2348: the server may only lower the size.
			if err != nil || n < minBlockSize || n > t.asked {
				return false, t.abort(CodeOptionNegotiation, "bad blksize", fmt.Errorf("server chose block size %q, asked for %d", v, t.asked))
			}
			t.blksize = n
		}
		if v, ok := opts["tsize"]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				t.tsize = n
			}
		}
		t.accepted = true
		t.last = ack(0)
		return false, t.send(t.last)
	case opDATA:
		if len(pkt) < 2 {
			return false, t.abort(CodeIllegalOperation, "short packet", errors.New("short DATA packet"))
		}
		block := binary.BigEndian.Uint16(pkt)
		data := pkt[2:]
		if block != t.expect {
			if block == t.expect-1 {
				// The server did not get our ACK: acknowledge again.
				return false, t.send(t.last)
			}
			return false, nil
		}
		t.accepted = true
		if len(data) > t.blksize {
			return false, t.abort(CodeIllegalOperation, "block too large", fmt.Errorf("block %d has %d bytes, more than the block size %d", block, len(data), t.blksize))
		}
		if len(data) > 0 {
			n, err := t.w.Write(data)
			t.written += int64(n)
			if err != nil {
				return false, t.abort(CodeDiskFull, "write failed", fmt.Errorf("writing: %w", err))
			}
		}
		t.last = ack(block)
		if err := t.send(t.last); err != nil {
			return false, err
		}
		if len(data) < t.blksize {
			if t.tsize >= 0 && t.written != t.tsize {
				return false, fmt.Errorf("received %d bytes, the server announced %d", t.written, t.tsize)
			}
			return true, nil
		}
		t.expect++ // wraps from 65535 to 0, as most servers do
		return false, nil
	case opERROR:
		return false, parseError(pkt)
	default:
		return false, t.abort(CodeIllegalOperation, "unexpected packet", fmt.Errorf("unexpected opcode %d", op))
	}
}

// receive waits for the next packet from the transfer's peer, sending the
// last packet again on each timeout. Packets from any other address get an
// ERROR (RFC 1350 section 4) and are otherwise ignored.
func (t *transfer) receive(ctx context.Context) (uint16, []byte, error) {
	timeout := t.c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	retries := t.c.Retries
	if retries <= 0 {
		retries = 5
	}
	tries := 0
	for {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
		t.conn.SetReadDeadline(time.Now().Add(timeout))
		n, from, err := t.conn.ReadFromUDP(t.buf)
		if err != nil {
			if ctx.Err() != nil {
				return 0, nil, ctx.Err()
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				tries++
				if tries > retries {
					return 0, nil, ErrTimeout
				}
				if err := t.send(t.last); err != nil {
					return 0, nil, err
				}
				continue
			}
			return 0, nil, err
		}
		if t.peer == nil {
			if !from.IP.Equal(t.server.IP) {
				continue
			}
			t.peer = from
		} else if !from.IP.Equal(t.peer.IP) || from.Port != t.peer.Port {
			t.out.WriteToUDP(errorPacket(CodeUnknownTID, "unknown transfer ID"), from)
			continue
		}
		if n < 2 {
			continue
		}
		return binary.BigEndian.Uint16(t.buf), t.buf[2:n], nil
	}
}

// send sends p to the peer, or to the server's well-known port while the
// transfer's TID is not known yet.
func (t *transfer) send(p []byte) error {
	to := t.peer
	if to == nil {
		to = t.server
	}
	_, err := t.out.WriteToUDP(p, to)
	return err
}

// abort tells the peer why the transfer ends and returns err.
func (t *transfer) abort(code uint16, msg string, err error) error {
	t.send(errorPacket(code, msg))
	return err
}

func rrq(file string, blksize int) []byte {
	p := binary.BigEndian.AppendUint16(nil, opRRQ)
	p = append(append(p, file...), 0)
	p = append(append(p, "octet"...), 0)
	if blksize > 0 {
		p = append(append(p, "blksize"...), 0)
		p = append(append(p, strconv.Itoa(blksize)...), 0)
		p = append(append(p, "tsize"...), 0)
		p = append(append(p, '0'), 0)
	}
	return p
}

func ack(block uint16) []byte {
	p := binary.BigEndian.AppendUint16(nil, opACK)
	return binary.BigEndian.AppendUint16(p, block)
}

func errorPacket(code uint16, msg string) []byte {
	p := binary.BigEndian.AppendUint16(nil, opERROR)
	p = binary.BigEndian.AppendUint16(p, code)
	return append(append(p, msg...), 0)
}

func parseError(pkt []byte) error {
	if len(pkt) < 2 {
		return &Error{Code: CodeUndefined, Message: "(short error packet)"}
	}
	msg, _, _ := strings.Cut(string(pkt[2:]), "\x00")
	return &Error{Code: binary.BigEndian.Uint16(pkt), Message: msg}
}

// parseOptions reads an OACK's NUL-terminated name/value pairs; names are
// case-insensitive (RFC 2347).
func parseOptions(pkt []byte) (map[string]string, error) {
	fields := strings.Split(string(pkt), "\x00")
	if len(fields) == 0 || fields[len(fields)-1] != "" {
		return nil, errors.New("option list not NUL-terminated")
	}
	fields = fields[:len(fields)-1]
	if len(fields)%2 != 0 {
		return nil, errors.New("option without a value")
	}
	opts := map[string]string{}
	for i := 0; i < len(fields); i += 2 {
		opts[strings.ToLower(fields[i])] = fields[i+1]
	}
	return opts, nil
}
