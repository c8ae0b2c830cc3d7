package dhcplease

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// wire builds D-Bus values by hand, little endian, as the D-Bus
// Specification lays them out, independently of the package's encoder.
type wire struct{ b []byte }

func (w *wire) pad(n int) {
	for len(w.b)%n != 0 {
		w.b = append(w.b, 0)
	}
}
func (w *wire) u32(v uint32) { w.pad(4); w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *wire) str(s string) { w.u32(uint32(len(s))); w.b = append(append(w.b, s...), 0) }
func (w *wire) sig(s string) { w.b = append(append(append(w.b, byte(len(s))), s...), 0) }

// arrayOf writes an array whose elements (aligned to elemAlign) fill writes.
func (w *wire) arrayOf(elemAlign int, elems func()) {
	w.u32(0)
	at := len(w.b) - 4
	w.pad(elemAlign)
	start := len(w.b)
	elems()
	binary.LittleEndian.PutUint32(w.b[at:], uint32(len(w.b)-start))
}

// fakeMessage is a message laid out by hand: type, reply serial (0: none),
// error name, body signature and body.
func fakeMessage(typ byte, replySerial uint32, errName, bodySig string, body []byte) []byte {
	var h wire
	h.b = []byte{'l', typ, 0, 1}
	h.u32(uint32(len(body)))
	h.u32(900 + replySerial)
	h.arrayOf(8, func() {
		if replySerial != 0 {
			h.pad(8)
			h.b = append(h.b, 5)
			h.sig("u")
			h.u32(replySerial)
		}
		if errName != "" {
			h.pad(8)
			h.b = append(h.b, 4)
			h.sig("s")
			h.str(errName)
		}
		if bodySig != "" {
			h.pad(8)
			h.b = append(h.b, 8)
			h.sig("g")
			h.sig(bodySig)
		}
	})
	h.pad(8)
	return append(h.b, body...)
}

// call is a method call as the fake bus parsed it.
type call struct {
	serial                    uint32
	path, iface, member, dest string
	sig                       string
	args                      []string
}

// parseCall reads one method call by hand.
func parseCall(t *testing.T, r io.Reader) (call, error) {
	var fixed [16]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return call{}, err
	}
	if fixed[0] != 'l' || fixed[1] != 1 || fixed[3] != 1 {
		t.Errorf("message header %x: want little endian, METHOD_CALL, version 1", fixed[:4])
	}
	bodyLen, fieldsLen := binary.LittleEndian.Uint32(fixed[4:]), binary.LittleEndian.Uint32(fixed[12:])
	rest := make([]byte, (int(fieldsLen)+7)&^7+int(bodyLen))
	if _, err := io.ReadFull(r, rest); err != nil {
		return call{}, err
	}
	msg := append(fixed[:], rest...)
	c := call{serial: binary.LittleEndian.Uint32(fixed[8:])}
	pos := 16
	align := func(n int) { pos = (pos + n - 1) / n * n }
	str := func() string {
		align(4)
		n := int(binary.LittleEndian.Uint32(msg[pos:]))
		s := string(msg[pos+4 : pos+4+n])
		if msg[pos+4+n] != 0 {
			t.Errorf("string %q not NUL-terminated", s)
		}
		pos += 5 + n
		return s
	}
	sig := func() string {
		n := int(msg[pos])
		s := string(msg[pos+1 : pos+1+n])
		pos += n + 2
		return s
	}
	for pos < 16+int(fieldsLen) {
		align(8)
		code := msg[pos]
		pos++
		var v string
		switch typ := sig(); typ {
		case "o", "s":
			v = str()
		case "g":
			v = sig()
		default:
			t.Fatalf("header field %d of type %q", code, typ)
		}
		switch code {
		case 1:
			c.path = v
		case 2:
			c.iface = v
		case 3:
			c.member = v
		case 6:
			c.dest = v
		case 8:
			c.sig = v
		}
	}
	pos = 16 + (int(fieldsLen)+7)&^7
	for range c.sig {
		c.args = append(c.args, str())
	}
	return c, nil
}

// fakeNM is a system bus with NetworkManager on it: properties maps
// "path iface.name" to a reply body of signature v.
func fakeNM(t *testing.T, properties map[string][]byte) (string, func() []call) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "bus")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	var calls []call
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		line, _ := r.ReadString('\n')
		if !strings.HasPrefix(line, "\x00AUTH EXTERNAL ") {
			io.WriteString(conn, "REJECTED EXTERNAL\r\n")
			return
		}
		io.WriteString(conn, "OK 0123456789abcdef0123456789abcdef\r\n")
		if line, _ := r.ReadString('\n'); line != "BEGIN\r\n" {
			return
		}
		for {
			c, err := parseCall(t, r)
			if err != nil {
				return
			}
			mu.Lock()
			calls = append(calls, c)
			mu.Unlock()
			switch {
			case c.member == "Hello":
				// A signal first, as the bus sends NameAcquired.
				var sb wire
				sb.str(":1.42")
				conn.Write(fakeMessage(4, 0, "", "s", sb.b))
				var b wire
				b.str(":1.42")
				conn.Write(fakeMessage(2, c.serial, "", "s", b.b))
			case c.member == "Get" && len(c.args) == 2:
				body, ok := properties[c.path+" "+c.args[0]+"."+c.args[1]]
				if !ok {
					conn.Write(fakeMessage(3, c.serial, "org.freedesktop.DBus.Error.UnknownObject", "", nil))
					continue
				}
				conn.Write(fakeMessage(2, c.serial, "", "v", body))
			default:
				conn.Write(fakeMessage(3, c.serial, "org.freedesktop.DBus.Error.UnknownMethod", "", nil))
			}
		}
	}()
	return socket, func() []call {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls)
	}
}

func variantPaths(paths ...string) []byte {
	var w wire
	w.sig("ao")
	w.arrayOf(4, func() {
		for _, p := range paths {
			w.str(p)
		}
	})
	return w.b
}

func variantPath(p string) []byte {
	var w wire
	w.sig("o")
	w.str(p)
	return w.b
}

func variantOptions(kv ...string) []byte {
	var w wire
	w.sig("a{sv}")
	w.arrayOf(8, func() {
		for i := 0; i < len(kv); i += 2 {
			w.pad(8)
			w.str(kv[i])
			w.sig("s")
			w.str(kv[i+1])
		}
	})
	return w.b
}

// TestNetworkManager asks a fake NetworkManager for its DHCP options, as
// Afterburn does (coreos/afterburn src/util/dhcp.rs, try_nm).
func TestNetworkManager(t *testing.T) {
	const nm = "org.freedesktop.NetworkManager"
	socket, calls := fakeNM(t, map[string][]byte{
		"/org/freedesktop/NetworkManager " + nm + ".ActiveConnections": variantPaths("/org/freedesktop/NetworkManager/ActiveConnection/1",
			"/org/freedesktop/NetworkManager/ActiveConnection/2"),
		"/org/freedesktop/NetworkManager/ActiveConnection/1 " + nm + ".Connection.Active.Dhcp4Config": variantPath("/"),
		"/org/freedesktop/NetworkManager/ActiveConnection/2 " + nm + ".Connection.Active.Dhcp4Config": variantPath("/org/freedesktop/NetworkManager/DHCP4Config/3"),
		"/org/freedesktop/NetworkManager/DHCP4Config/3 " + nm + ".DHCP4Config.Options": variantOptions(
			"broadcast_address", "10.1.1.255", "dhcp_server_identifier", "10.1.1.1", "ip_address", "10.1.1.20", "private_245", "a8:3f:81:10"),
	})
	leases, err := NetworkManager(context.Background(), socket)
	if err != nil {
		t.Fatalf("NetworkManager() = %v", err)
	}
	want := []Lease{{File: "dbus:/org/freedesktop/NetworkManager/DHCP4Config/3", Server: netip.MustParseAddr("10.1.1.1"), Option245: netip.MustParseAddr("168.63.129.16")}}
	if !slices.Equal(leases, want) {
		t.Errorf("leases = %+v, want %+v", leases, want)
	}
	var members []string
	for _, c := range calls() {
		members = append(members, c.dest+" "+c.path+" "+c.iface+"."+c.member+" "+strings.Join(c.args, ","))
	}
	wantCalls := []string{
		"org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.Hello ",
		"org.freedesktop.NetworkManager /org/freedesktop/NetworkManager org.freedesktop.DBus.Properties.Get org.freedesktop.NetworkManager,ActiveConnections",
		"org.freedesktop.NetworkManager /org/freedesktop/NetworkManager/ActiveConnection/1 org.freedesktop.DBus.Properties.Get org.freedesktop.NetworkManager.Connection.Active,Dhcp4Config",
		"org.freedesktop.NetworkManager /org/freedesktop/NetworkManager/ActiveConnection/2 org.freedesktop.DBus.Properties.Get org.freedesktop.NetworkManager.Connection.Active,Dhcp4Config",
		"org.freedesktop.NetworkManager /org/freedesktop/NetworkManager/DHCP4Config/3 org.freedesktop.DBus.Properties.Get org.freedesktop.NetworkManager.DHCP4Config,Options",
	}
	if !slices.Equal(members, wantCalls) {
		t.Errorf("calls =\n%s\nwant\n%s", strings.Join(members, "\n"), strings.Join(wantCalls, "\n"))
	}
}

func TestNetworkManagerFailures(t *testing.T) {
	// NetworkManager not on the bus: the bus answers an error.
	socket, _ := fakeNM(t, nil)
	if _, err := NetworkManager(context.Background(), socket); !errors.Is(err, ErrDBus) || !strings.Contains(err.Error(), "UnknownObject") {
		t.Errorf("without NetworkManager: %v, want ErrDBus naming the bus's error", err)
	}
	// No bus at all.
	if _, err := NetworkManager(context.Background(), filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrDBus) {
		t.Errorf("without a bus: %v, want ErrDBus", err)
	}
}

func TestDecoderRefusesShortValues(t *testing.T) {
	for _, b := range [][]byte{
		{2, 'a', 'o', 0, 40, 0, 0, 0}, // an array longer than the body
		{1, 's', 0, 0, 9, 0, 0, 0, 'a'},
		{5, 'a', '{', 's', 'v', '}'},
	} {
		if _, err := (&decoder{b: b}).value("v"); err == nil {
			t.Errorf("decoding %x: no error", b)
		}
	}
}

// Find reads the files first and asks NetworkManager only when they name
// nothing.
func TestFind(t *testing.T) {
	const nm = "org.freedesktop.NetworkManager"
	socket, calls := fakeNM(t, map[string][]byte{
		"/org/freedesktop/NetworkManager " + nm + ".ActiveConnections":                                variantPaths("/org/freedesktop/NetworkManager/ActiveConnection/1"),
		"/org/freedesktop/NetworkManager/ActiveConnection/1 " + nm + ".Connection.Active.Dhcp4Config": variantPath("/org/freedesktop/NetworkManager/DHCP4Config/1"),
		"/org/freedesktop/NetworkManager/DHCP4Config/1 " + nm + ".DHCP4Config.Options":                variantOptions("dhcp_server_identifier", "10.9.9.1"),
	})
	root := t.TempDir()
	path := func(p string) string {
		if p == SystemBus {
			return socket
		}
		return filepath.Join(root, p)
	}
	hasServer := func(l Lease) bool { return l.Server.IsValid() }
	// NetworkManager's lease file holds only ADDRESS=: the bus answers.
	writeFile(t, filepath.Join(root, "var/lib/NetworkManager/internal-eth0.lease"), "ADDRESS=10.9.9.20\n")
	l, ok := Find(context.Background(), path, hasServer)
	if !ok || l.Server != netip.MustParseAddr("10.9.9.1") {
		t.Errorf("Find() = %+v, %v; want NetworkManager's server 10.9.9.1", l, ok)
	}
	// A networkd lease names it: the bus is not asked.
	n := len(calls())
	writeFile(t, filepath.Join(root, "run/systemd/netif/leases/2"), "SERVER_ADDRESS=10.1.1.1\n")
	l, ok = Find(context.Background(), path, hasServer)
	if !ok || l.Server != netip.MustParseAddr("10.1.1.1") || len(calls()) != n {
		t.Errorf("Find() = %+v, %v after %d more calls; want networkd's 10.1.1.1 and no bus call", l, ok, len(calls())-n)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
