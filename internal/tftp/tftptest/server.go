// Package tftptest is an in-process TFTP server on 127.0.0.1 for tests,
// in the spirit of net/http/httptest: it serves files from a map, answers
// the blksize and tsize options (or pretends not to know them), and can
// lose packets on purpose. Only tests import it.
//
// Family: config sources, platforms and agent (internal/README.md).
package tftptest

import (
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is a read request the server received.
type Request struct {
	File    string
	Mode    string
	Options map[string]string // lower-case names
}

// Server serves Files until Close. Set the fields before Start.
type Server struct {
	Files map[string][]byte
	// NoOptions makes the server ignore every option, like a plain RFC
	// 1350 server: it answers with DATA 1 in 512-byte blocks.
	NoOptions bool
	// RefuseOptions makes the server answer a request with options with
	// ERROR 8, as RFC 2347 allows.
	RefuseOptions bool
	// MaxBlockSize caps the block size the server accepts (0: 65464).
	MaxBlockSize int
	// Lose, when set, is asked before each DATA packet is sent (try counts
	// from 0 for each block); true drops the packet, as a lossy network
	// would.
	Lose func(block uint16, try int) bool
	// DropRequests is how many read requests to ignore before answering,
	// so a client must send its request again.
	DropRequests int
	// Timeout is how long the server waits for an ACK before sending the
	// DATA again (0: 100 ms).
	Timeout time.Duration

	conn     *net.UDPConn
	mu       sync.Mutex
	requests []Request
	wg       sync.WaitGroup
	done     chan struct{}
}

// NewServer starts a server on 127.0.0.1 with a random port.
func NewServer(files map[string][]byte) *Server {
	s := NewUnstartedServer(files)
	s.Start()
	return s
}

// NewUnstartedServer listens on 127.0.0.1 with a random port but answers
// nothing until Start: set the fields in between.
func NewUnstartedServer(files map[string][]byte) *Server {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		panic("tftptest: listening: " + err.Error())
	}
	return &Server{Files: files, conn: conn, done: make(chan struct{})}
}

// Start starts answering requests.
func (s *Server) Start() {
	s.wg.Add(1)
	go s.serve()
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.conn.LocalAddr().String() }

// Port is the server's UDP port.
func (s *Server) Port() int { return s.conn.LocalAddr().(*net.UDPAddr).Port }

// Requests returns the read requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Close stops the server and waits for its transfers to end.
func (s *Server) Close() {
	close(s.done)
	s.conn.Close()
	s.wg.Wait()
}

func (s *Server) serve() {
	defer s.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		req, err := parseRRQ(buf[:n])
		if err != nil {
			s.conn.WriteToUDP(errorPacket(4, err.Error()), from)
			continue
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		drop := len(s.requests) <= s.DropRequests
		s.mu.Unlock()
		if drop {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.transfer(req, from)
		}()
	}
}

func parseRRQ(p []byte) (Request, error) {
	if len(p) < 2 || binary.BigEndian.Uint16(p) != 1 {
		return Request{}, errors.New("only read requests are served")
	}
	fields := strings.Split(string(p[2:]), "\x00")
	if len(fields) < 3 || fields[len(fields)-1] != "" {
		return Request{}, errors.New("malformed request")
	}
	fields = fields[:len(fields)-1]
	req := Request{File: fields[0], Mode: strings.ToLower(fields[1]), Options: map[string]string{}}
	opts := fields[2:]
	if len(opts)%2 != 0 {
		return Request{}, errors.New("option without a value")
	}
	for i := 0; i < len(opts); i += 2 {
		req.Options[strings.ToLower(opts[i])] = opts[i+1]
	}
	return req, nil
}

// transfer sends one file from a new port (the transfer's TID).
func (s *Server) transfer(req Request, client *net.UDPAddr) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return
	}
	defer conn.Close()
	go func() {
		<-s.done
		conn.Close()
	}()
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 100 * time.Millisecond
	}
	data, ok := s.Files[req.File]
	if !ok {
		conn.WriteToUDP(errorPacket(1, "file not found"), client)
		return
	}
	if req.Mode != "octet" {
		conn.WriteToUDP(errorPacket(4, "only octet mode"), client)
		return
	}

	blksize := 512
	oack := binary.BigEndian.AppendUint16(nil, 6)
	if len(req.Options) > 0 && !s.NoOptions {
		if s.RefuseOptions {
			conn.WriteToUDP(errorPacket(8, "options refused"), client)
			return
		}
		if v, ok := req.Options["blksize"]; ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 8 {
				blksize = min(n, 65464)
				if s.MaxBlockSize > 0 {
					blksize = min(blksize, s.MaxBlockSize)
				}
				oack = appendOption(oack, "blksize", strconv.Itoa(blksize))
			}
		}
		if _, ok := req.Options["tsize"]; ok {
			oack = appendOption(oack, "tsize", strconv.Itoa(len(data)))
		}
	}
	buf := make([]byte, 65536)
	// await sends p until the client acknowledges block.
	await := func(p []byte, block uint16, lose func(try int) bool) bool {
		for try := 0; try < 10; try++ {
			if lose == nil || !lose(try) {
				conn.WriteToUDP(p, client)
			}
			conn.SetReadDeadline(time.Now().Add(timeout))
			for {
				n, from, err := conn.ReadFromUDP(buf)
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						break
					}
					return false
				}
				if from.Port != client.Port || n < 4 {
					continue
				}
				switch binary.BigEndian.Uint16(buf) {
				case 4:
					if binary.BigEndian.Uint16(buf[2:]) == block {
						return true
					}
				case 5:
					return false // the client gave up
				}
			}
		}
		return false
	}
	if len(oack) > 2 {
		if !await(oack, 0, nil) {
			return
		}
	}
	for i, block := 0, uint16(1); ; i, block = i+1, block+1 {
		start := i * blksize
		end := min(start+blksize, len(data))
		if start > len(data) {
			return
		}
		p := binary.BigEndian.AppendUint16(nil, 3)
		p = binary.BigEndian.AppendUint16(p, block)
		p = append(p, data[start:end]...)
		var lose func(int) bool
		if s.Lose != nil {
			lose = func(try int) bool { return s.Lose(block, try) }
		}
		if !await(p, block, lose) {
			return
		}
		if end-start < blksize {
			return
		}
	}
}

func appendOption(p []byte, name, value string) []byte {
	p = append(append(p, name...), 0)
	return append(append(p, value...), 0)
}

func errorPacket(code uint16, msg string) []byte {
	p := binary.BigEndian.AppendUint16(nil, 5)
	p = binary.BigEndian.AppendUint16(p, code)
	return append(append(p, msg...), 0)
}
