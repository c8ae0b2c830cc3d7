package tftp

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
)

// sentPackets records what a transfer sends, in place of its socket.
type sentPackets struct {
	packets [][]byte
	to      []*net.UDPAddr
}

func (s *sentPackets) WriteToUDP(b []byte, addr *net.UDPAddr) (int, error) {
	s.packets = append(s.packets, bytes.Clone(b))
	s.to = append(s.to, addr)
	return len(b), nil
}

// splitScript cuts fuzz input into server packets: each is a two-byte
// big-endian length, then that many bytes (the last one takes what is
// left).
func splitScript(script []byte) [][]byte {
	var pkts [][]byte
	for len(script) >= 2 {
		n := int(binary.BigEndian.Uint16(script))
		script = script[2:]
		n = min(n, len(script))
		pkts = append(pkts, script[:n])
		script = script[n:]
	}
	return pkts
}

// scriptOf is the inverse of splitScript, for the seeds.
func scriptOf(pkts ...[]byte) []byte {
	var out []byte
	for _, p := range pkts {
		out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
		out = append(out, p...)
	}
	return out
}

func dataPacket(block uint16, payload []byte) []byte {
	p := binary.BigEndian.AppendUint16(nil, opDATA)
	p = binary.BigEndian.AppendUint16(p, block)
	return append(p, payload...)
}

func oackPacket(kv ...string) []byte {
	p := binary.BigEndian.AppendUint16(nil, opOACK)
	for _, s := range kv {
		p = append(append(p, s...), 0)
	}
	return p
}

// FuzzTransfer hands a read request's state machine any sequence of
// server packets — the answers of a broken or hostile server — with any
// block size asked for. Besides not panicking it must:
//   - write exactly the payloads of the DATA blocks numbered 1, 2, 3 …
//     (wrapping) in the order they came, ignoring duplicates and strays:
//     a simple model of RFC 1350's lock-step reassembly;
//   - finish only on a block shorter than the block size in force, after
//     full blocks only, with as many bytes as an announced tsize;
//   - accept a block size only if it asked for options, and never one
//     larger than it asked for (RFC 2348);
//   - send only ACKs and ERRORs, at most one per packet received, each
//     ACK naming block 0 (after an OACK) or a block it received.
func FuzzTransfer(f *testing.F) {
	full := bytes.Repeat([]byte{'a'}, 512)
	f.Add(512, scriptOf(dataPacket(1, []byte("hello"))))
	f.Add(-1, scriptOf(dataPacket(1, full), dataPacket(1, full), dataPacket(2, nil)))
	f.Add(1024, scriptOf(oackPacket("blksize", "16", "tsize", "20"), dataPacket(1, full[:16]), dataPacket(2, full[:4])))
	f.Add(1024, scriptOf(oackPacket("BLKSIZE", "2048"), dataPacket(1, nil)))
	f.Add(8, scriptOf(oackPacket("blksize", "8"), dataPacket(1, full[:8]), dataPacket(0, full[:8]), dataPacket(2, full[:3])))
	f.Add(1448, scriptOf([]byte{0, 5, 0, 1, 'n', 'o', 0}))
	f.Add(1448, scriptOf(oackPacket("tsize", "3"), oackPacket("tsize", "3"), dataPacket(1, []byte("abcd"))))
	f.Fuzz(func(t *testing.T, asked int, script []byte) {
		if asked != -1 && (asked < minBlockSize || asked > maxBlockSize) {
			asked = DefaultBlockSize // Get refuses the others before any packet
		}
		sent := &sentPackets{}
		server := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 69}
		var got bytes.Buffer
		tr := newTransfer(&Client{}, sent, server, "f", asked, &got)
		tr.peer = server

		var (
			want       bytes.Buffer
			expect     = uint16(1)
			blocks     []int // lengths of the blocks the model accepts
			acked      = map[uint16]bool{0: true}
			done       bool
			err        error
			sawOptions bool
		)
		for _, pkt := range splitScript(script) {
			if len(pkt) < 2 {
				continue // receive drops these before handle
			}
			op := binary.BigEndian.Uint16(pkt)
			body := pkt[2:]
			if op == opOACK && !tr.accepted {
				sawOptions = true
			}
			if op == opDATA && len(body) >= 2 && binary.BigEndian.Uint16(body) == expect && len(body)-2 <= tr.blksize {
				want.Write(body[2:])
				blocks = append(blocks, len(body)-2)
				acked[expect] = true
				expect++
			}
			before, began := len(sent.packets), tr.accepted
			done, err = tr.handle(op, body)
			if len(sent.packets) > before+1 {
				t.Fatalf("sent %d packets for one received", len(sent.packets)-before)
			}
			for _, p := range sent.packets[before:] {
				checkSent(t, p, acked, began)
			}
			if done || err != nil {
				break
			}
		}

		if got.Len() != int(tr.written) {
			t.Fatalf("written = %d, the writer got %d bytes", tr.written, got.Len())
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("wrote %d bytes, the in-order DATA payloads are %d bytes (equal: false)", got.Len(), want.Len())
		}
		if tr.blksize != plainBlockSize {
			if !sawOptions || asked < 0 || tr.blksize > asked || tr.blksize < minBlockSize {
				t.Fatalf("block size in force %d, asked for %d, OACK seen %v", tr.blksize, asked, sawOptions)
			}
		}
		if done {
			if err != nil {
				t.Fatalf("handle = done and %v", err)
			}
			if len(blocks) == 0 || blocks[len(blocks)-1] >= tr.blksize {
				t.Fatalf("done without a short last block (blocks %v, block size %d)", blocks, tr.blksize)
			}
			for _, n := range blocks[:len(blocks)-1] {
				if n != tr.blksize {
					t.Fatalf("done after a short block in the middle (blocks %v, block size %d)", blocks, tr.blksize)
				}
			}
			if tr.tsize >= 0 && tr.written != tr.tsize {
				t.Fatalf("done with %d bytes, the server announced %d", tr.written, tr.tsize)
			}
		}
	})
}

// checkSent fails the test unless p is an ACK of a block received (or 0),
// an ERROR, or — before the transfer began — the request again.
func checkSent(t *testing.T, p []byte, acked map[uint16]bool, began bool) {
	t.Helper()
	if len(p) < 4 {
		t.Fatalf("sent a %d-byte packet", len(p))
	}
	switch op := binary.BigEndian.Uint16(p); op {
	case opACK:
		if n := binary.BigEndian.Uint16(p[2:]); len(p) != 4 || !acked[n] {
			t.Fatalf("sent ACK %d (%d bytes), for no block received", n, len(p))
		}
	case opERROR:
		if p[len(p)-1] != 0 {
			t.Fatalf("sent an ERROR without its NUL: %q", p)
		}
	case opRRQ:
		if began {
			t.Fatalf("sent the request again after the transfer began")
		}
	default:
		t.Fatalf("sent opcode %d", op)
	}
}
