package dhcplease

// NetworkManager keeps only ADDRESS= in its lease files (NetworkManager
// src/core/dhcp/nm-dhcp-nettools.c, lease_save); the DHCP options it got
// are on D-Bus, as the Options of each active connection's DHCP4Config.
// Afterburn reads them there (coreos/afterburn src/util/dhcp.rs, try_nm):
// dhcp_server_identifier, and private_245 for Azure's WireServer. This is
// the smallest D-Bus client that does the same, for the four method calls
// it needs, rather than a D-Bus library in the initramfs binary: the
// wire format is the D-Bus Specification's ("Message Protocol"), little
// endian, SASL EXTERNAL authentication as the process's uid.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// SystemBus is the system bus's socket (the D-Bus Specification's default
// for DBUS_SYSTEM_BUS_ADDRESS).
const SystemBus = "/run/dbus/system_bus_socket"

// maxMessage bounds a message read from the bus (the specification's own
// limit is 128 MiB; NetworkManager's answers here are a few KB).
const maxMessage = 1 << 20

// ErrDBus is a failed exchange with the bus or NetworkManager.
var ErrDBus = errors.New("D-Bus")

// NetworkManager asks NetworkManager, over the system bus at socket, for
// the DHCP options of every active connection, and returns one Lease per
// connection that has a DHCPv4 configuration (File names the D-Bus
// object). The exchange ends with ctx, or after 5 s.
func NetworkManager(ctx context.Context, socket string) ([]Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDBus, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	b := &bus{conn: conn, r: bufio.NewReader(conn)}
	if err := b.auth(); err != nil {
		return nil, fmt.Errorf("%w: authenticating to %s: %w", ErrDBus, socket, err)
	}
	if _, err := b.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello"); err != nil {
		return nil, fmt.Errorf("%w: %s: Hello: %w", ErrDBus, socket, err)
	}
	const nm = "org.freedesktop.NetworkManager"
	conns, err := b.property("/org/freedesktop/NetworkManager", nm, "ActiveConnections")
	if err != nil {
		return nil, err
	}
	paths, _ := conns.([]any)
	var leases []Lease
	for _, p := range paths {
		path, _ := p.(string)
		if path == "" || path == "/" {
			continue
		}
		v, err := b.property(path, nm+".Connection.Active", "Dhcp4Config")
		if err != nil {
			return nil, err
		}
		dhcp, _ := v.(string)
		if dhcp == "" || dhcp == "/" {
			continue
		}
		v, err = b.property(dhcp, nm+".DHCP4Config", "Options")
		if err != nil {
			return nil, err
		}
		l := Lease{File: "dbus:" + dhcp}
		entries, _ := v.([]any)
		for _, e := range entries {
			kv, _ := e.([]any)
			if len(kv) != 2 {
				continue
			}
			key, _ := kv[0].(string)
			val, _ := kv[1].(string)
			switch key {
			case "dhcp_server_identifier":
				l.Server = parseAddr(val)
			case "private_245":
				// NetworkManager prints the option's bytes as hex,
				// colon-separated (a8:3f:81:10).
				l.Option245 = addrFromBytes(colonHex(val))
			}
		}
		leases = append(leases, l)
	}
	return leases, nil
}

// bus is one connection to a message bus.
type bus struct {
	conn   net.Conn
	r      *bufio.Reader
	serial uint32
}

// auth makes the SASL EXTERNAL exchange as the process's uid.
func (b *bus) auth() error {
	uid := hex.EncodeToString([]byte(strconv.Itoa(os.Getuid())))
	if _, err := io.WriteString(b.conn, "\x00AUTH EXTERNAL "+uid+"\r\n"); err != nil {
		return err
	}
	line, err := b.r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "OK ") {
		return fmt.Errorf("the bus refused: %q", strings.TrimSpace(line))
	}
	_, err = io.WriteString(b.conn, "BEGIN\r\n")
	return err
}

// property returns the value of iface's property name on the
// NetworkManager object path (org.freedesktop.DBus.Properties.Get).
func (b *bus) property(path, iface, name string) (any, error) {
	body, err := b.call("org.freedesktop.NetworkManager", path, "org.freedesktop.DBus.Properties", "Get", iface, name)
	if err != nil {
		return nil, fmt.Errorf("%w: NetworkManager %s %s.%s: %w", ErrDBus, path, iface, name, err)
	}
	d := &decoder{b: body}
	v, err := d.value("v")
	if err != nil {
		return nil, fmt.Errorf("%w: NetworkManager %s %s.%s: %w", ErrDBus, path, iface, name, err)
	}
	return v, nil
}

// call sends a method call whose arguments are strings and returns the
// body of its reply.
func (b *bus) call(dest, path, iface, member string, args ...string) ([]byte, error) {
	b.serial++
	if _, err := b.conn.Write(methodCall(b.serial, dest, path, iface, member, args...)); err != nil {
		return nil, err
	}
	for {
		m, err := readMessage(b.r)
		if err != nil {
			return nil, err
		}
		if m.replySerial != b.serial {
			continue // a signal, or NameAcquired after Hello
		}
		if m.typ == msgError {
			return nil, fmt.Errorf("%s", m.errorName)
		}
		return m.body, nil
	}
}

// Message types and header field codes (D-Bus Specification, "Message
// Format").
const (
	msgMethodCall   = 1
	msgMethodReturn = 2
	msgError        = 3

	fieldPath        = 1
	fieldInterface   = 2
	fieldMember      = 3
	fieldErrorName   = 4
	fieldReplySerial = 5
	fieldDestination = 6
	fieldSignature   = 8
)

// encoder lays values out little endian, aligned from the message start.
type encoder struct{ b []byte }

func (e *encoder) align(n int) {
	for len(e.b)%n != 0 {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) u32(v uint32) {
	e.align(4)
	e.b = binary.LittleEndian.AppendUint32(e.b, v)
}

// str writes a STRING or OBJECT_PATH.
func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

// sig writes a SIGNATURE.
func (e *encoder) sig(s string) {
	e.b = append(e.b, byte(len(s)))
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

// methodCall encodes a METHOD_CALL message with string arguments.
func methodCall(serial uint32, dest, path, iface, member string, args ...string) []byte {
	var body encoder
	for _, a := range args {
		body.str(a)
	}
	e := encoder{b: []byte{'l', msgMethodCall, 0, 1}}
	e.u32(uint32(len(body.b)))
	e.u32(serial)
	lenAt := len(e.b)
	e.u32(0) // the header fields' length, set below
	start := len(e.b)
	field := func(code byte, sig, v string) {
		e.align(8)
		e.b = append(e.b, code)
		e.sig(sig)
		if sig == "g" {
			e.sig(v)
		} else {
			e.str(v)
		}
	}
	field(fieldPath, "o", path)
	field(fieldInterface, "s", iface)
	field(fieldMember, "s", member)
	field(fieldDestination, "s", dest)
	if len(args) > 0 {
		field(fieldSignature, "g", strings.Repeat("s", len(args)))
	}
	binary.LittleEndian.PutUint32(e.b[lenAt:], uint32(len(e.b)-start))
	e.align(8)
	return append(e.b, body.b...)
}

// message is what flint needs of a message read from the bus.
type message struct {
	typ         byte
	replySerial uint32
	errorName   string
	body        []byte
}

// readMessage reads one message.
func readMessage(r io.Reader) (message, error) {
	var fixed [16]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return message{}, err
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch fixed[0] {
	case 'l':
	case 'B':
		order = binary.BigEndian
	default:
		return message{}, fmt.Errorf("a message in endianness %q", fixed[0])
	}
	bodyLen, fieldsLen := order.Uint32(fixed[4:]), order.Uint32(fixed[12:])
	headerLen := (16 + uint64(fieldsLen) + 7) &^ 7
	total := headerLen + uint64(bodyLen)
	if total > maxMessage {
		return message{}, fmt.Errorf("a message of %d bytes", total)
	}
	buf := make([]byte, total)
	copy(buf, fixed[:])
	if _, err := io.ReadFull(r, buf[16:]); err != nil {
		return message{}, err
	}
	m := message{typ: fixed[1], body: buf[headerLen:]}
	// The header fields, decoded from the message start for alignment.
	d := &decoder{b: buf[:16+fieldsLen], pos: 16, order: order}
	for d.pos < len(d.b) {
		if err := d.align(8); err != nil {
			return message{}, err
		}
		if d.pos >= len(d.b) {
			break
		}
		code := d.b[d.pos]
		d.pos++
		v, err := d.value("v")
		if err != nil {
			return message{}, fmt.Errorf("header field %d: %w", code, err)
		}
		switch code {
		case fieldReplySerial:
			n, _ := v.(uint64)
			m.replySerial = uint32(n)
		case fieldErrorName:
			m.errorName, _ = v.(string)
		}
	}
	if order == binary.BigEndian && len(m.body) > 0 {
		// Bodies are read little endian; NetworkManager's bus speaks it.
		return message{}, errors.New("a big-endian message body")
	}
	return m, nil
}

// decoder reads values of any D-Bus type: integers as uint64 (int64 for
// the signed ones), strings, object paths and signatures as string,
// arrays, structs and dict entries as []any, a variant as its value.
type decoder struct {
	b     []byte
	pos   int
	order binary.ByteOrder
}

var errShort = errors.New("a value runs past the message")

func (d *decoder) align(n int) error {
	p := (d.pos + n - 1) / n * n
	if p > len(d.b) {
		return errShort
	}
	d.pos = p
	return nil
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || d.pos+n > len(d.b) {
		return nil, errShort
	}
	v := d.b[d.pos : d.pos+n]
	d.pos += n
	return v, nil
}

func (d *decoder) uint(size int) (uint64, error) {
	if d.order == nil {
		d.order = binary.LittleEndian
	}
	if err := d.align(size); err != nil {
		return 0, err
	}
	v, err := d.take(size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(v[0]), nil
	case 2:
		return uint64(d.order.Uint16(v)), nil
	case 4:
		return uint64(d.order.Uint32(v)), nil
	}
	return d.order.Uint64(v), nil
}

// sigString reads a SIGNATURE.
func (d *decoder) sigString() (string, error) {
	n, err := d.take(1)
	if err != nil {
		return "", err
	}
	s, err := d.take(int(n[0]) + 1)
	if err != nil {
		return "", err
	}
	return string(s[:len(s)-1]), nil
}

// completeType splits the first complete type off sig.
func completeType(sig string) (string, string, error) {
	if sig == "" {
		return "", "", errors.New("an empty signature")
	}
	switch sig[0] {
	case 'a':
		t, rest, err := completeType(sig[1:])
		return "a" + t, rest, err
	case '(', '{':
		closer := map[byte]byte{'(': ')', '{': '}'}[sig[0]]
		depth := 0
		for i := 0; i < len(sig); i++ {
			switch sig[i] {
			case '(', '{':
				depth++
			case ')', '}':
				depth--
				if depth == 0 {
					if sig[i] != closer {
						return "", "", fmt.Errorf("signature %q: unbalanced", sig)
					}
					return sig[:i+1], sig[i+1:], nil
				}
			}
		}
		return "", "", fmt.Errorf("signature %q: unbalanced", sig)
	}
	return sig[:1], sig[1:], nil
}

// value reads one value of the complete type t.
func (d *decoder) value(t string) (any, error) {
	switch t[0] {
	case 'y':
		return d.uint(1)
	case 'n', 'q':
		v, err := d.uint(2)
		if t[0] == 'n' {
			return int64(int16(v)), err
		}
		return v, err
	case 'b', 'u', 'h':
		return d.uint(4)
	case 'i':
		v, err := d.uint(4)
		return int64(int32(v)), err
	case 'x':
		v, err := d.uint(8)
		return int64(v), err
	case 't', 'd':
		return d.uint(8)
	case 's', 'o':
		n, err := d.uint(4)
		if err != nil {
			return nil, err
		}
		s, err := d.take(int(n) + 1)
		if err != nil {
			return nil, err
		}
		return string(s[:n]), nil
	case 'g':
		return d.sigString()
	case 'v':
		sig, err := d.sigString()
		if err != nil {
			return nil, err
		}
		inner, rest, err := completeType(sig)
		if err != nil || rest != "" {
			return nil, fmt.Errorf("variant signature %q: not one type", sig)
		}
		return d.value(inner)
	case 'a':
		n, err := d.uint(4)
		if err != nil {
			return nil, err
		}
		elem := t[1:]
		if err := d.align(typeAlign(elem[0])); err != nil {
			return nil, err
		}
		end := d.pos + int(n)
		if end > len(d.b) {
			return nil, errShort
		}
		var out []any
		for d.pos < end {
			v, err := d.value(elem)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case '(', '{':
		if err := d.align(8); err != nil {
			return nil, err
		}
		var out []any
		for inner := t[1 : len(t)-1]; inner != ""; {
			var one string
			var err error
			if one, inner, err = completeType(inner); err != nil {
				return nil, err
			}
			v, err := d.value(one)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("type %q is not read", t[:1])
}

// typeAlign is the alignment of a type code (D-Bus Specification,
// "Marshaling (Wire Format)").
func typeAlign(c byte) int {
	switch c {
	case 'y', 'g', 'v':
		return 1
	case 'n', 'q':
		return 2
	case 'x', 't', 'd', '(', '{':
		return 8
	}
	return 4
}

// Find returns the first lease for which want is true: the lease files
// (Read) first, then NetworkManager's DHCP options over the system bus
// (path(SystemBus)), whose lease files hold neither value. A bus that is
// not there, or has no NetworkManager on it, is no lease.
func Find(ctx context.Context, path func(string) string, want func(Lease) bool) (Lease, bool) {
	for _, l := range Read(path) {
		if want(l) {
			return l, true
		}
	}
	if path == nil {
		path = func(p string) string { return p }
	}
	leases, _ := NetworkManager(ctx, path(SystemBus))
	for _, l := range leases {
		if want(l) {
			return l, true
		}
	}
	return Lease{}, false
}
