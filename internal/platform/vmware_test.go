package platform

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hvTestLogger sends the hypervisor providers' logs to t.Log.
func hvTestLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(hvLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type hvLogWriter struct{ t *testing.T }

func (w hvLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// fakeVMX plays the hypervisor's side of the backdoor message protocol
// (vmware_rpc.go) and answers RPCI commands with handle.
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

// guestinfoHandler answers info-get/info-set from vars, like the VMX.
func guestinfoHandler(vars map[string]string) func(string) string {
	return func(cmd string) string {
		if key, ok := strings.CutPrefix(cmd, "info-get "); ok {
			v, ok := vars[key]
			if !ok {
				return "0 No value found"
			}
			return "1 " + v
		}
		if rest, ok := strings.CutPrefix(cmd, "info-set "); ok {
			key, value, _ := strings.Cut(rest, " ")
			vars[key] = value
			return "1 "
		}
		return "0 Unknown command"
	}
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
		vmx := newFakeVMX(t, false, guestinfoHandler(nil))
		vmx.fault = fmt.Errorf("faulted: %w", ErrNoProvider)
		if _, err := (backdoorRPC{bd: vmx}).Call(ctx, "x"); !errors.Is(err, ErrNoProvider) {
			t.Errorf("Call on a faulting backdoor = %v, want ErrNoProvider", err)
		}
	})
	t.Run("open refused", func(t *testing.T) {
		vmx := newFakeVMX(t, false, guestinfoHandler(nil))
		if _, err := openChannel(vmx, 0x1234); !errors.Is(err, errMsgFailed) {
			t.Errorf("openChannel(unknown protocol) = %v, want errMsgFailed", err)
		}
	})
	t.Run("endless checkpoints", func(t *testing.T) {
		vmx := newFakeVMX(t, false, guestinfoHandler(nil))
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
		vmx := newFakeVMX(t, false, guestinfoHandler(nil))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := (backdoorRPC{bd: vmx}).Call(cctx, "x"); !errors.Is(err, context.Canceled) {
			t.Errorf("Call with a cancelled context = %v, want context.Canceled", err)
		}
	})
}

func TestRPCIResult(t *testing.T) {
	tests := []struct {
		reply   string
		result  string
		success bool
		wantErr bool
	}{
		{reply: "1 value", result: "value", success: true},
		{reply: "1 ", result: "", success: true},
		{reply: "1", result: "", success: true},
		{reply: "1  two spaces", result: " two spaces", success: true},
		{reply: "0 No value found", result: "No value found"},
		{reply: "", wantErr: true},
		{reply: "OK", wantErr: true},
	}
	for _, tt := range tests {
		result, success, err := rpciResult([]byte(tt.reply))
		if (err != nil) != tt.wantErr || result != tt.result || success != tt.success {
			t.Errorf("rpciResult(%q) = %q, %v, %v; want %q, %v, error %v", tt.reply, result, success, err, tt.result, tt.success, tt.wantErr)
		}
	}
}

func vmwGzip(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDecodeGuestinfo(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	b64 := base64.StdEncoding.EncodeToString([]byte(config))
	gz := vmwGzip(t, config)
	gzb64 := base64.StdEncoding.EncodeToString([]byte(gz))
	wrapped := b64[:20] + "\n" + b64[20:40] + "\r\n" + b64[40:]
	tests := []struct {
		data, encoding string
		want           string
		wantErr        string
	}{
		{data: config, encoding: "", want: config},
		{data: b64, encoding: "base64", want: config},
		{data: b64, encoding: "b64", want: config},
		{data: wrapped, encoding: "base64", want: config},
		{data: gz, encoding: "gzip", want: config},
		{data: gz, encoding: "gz", want: config},
		{data: gzb64, encoding: "gzip+base64", want: config},
		{data: gzb64, encoding: "gz+base64", want: config},
		{data: gzb64, encoding: "gzip+b64", want: config},
		{data: gzb64, encoding: "gz+b64", want: config},
		{data: "", encoding: "base64", want: ""},
		{data: config, encoding: "base32", wantErr: "unsupported encoding"},
		{data: config, encoding: "Base64", wantErr: "unsupported encoding"},
		{data: "not base64!", encoding: "base64", wantErr: "decoding base64"},
		{data: b64, encoding: "gzip+base64", wantErr: "decompressing gzip"},
		{data: config, encoding: "gzip", wantErr: "decompressing gzip"},
		{data: base64.StdEncoding.EncodeToString([]byte(gz[:len(gz)-6])), encoding: "gzip+base64", wantErr: "decompressing gzip"},
	}
	for _, tt := range tests {
		got, err := decodeGuestinfo(tt.data, tt.encoding)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("decodeGuestinfo(%.20q, %q) error = %v, want one containing %q", tt.data, tt.encoding, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("decodeGuestinfo(%.20q, %q) = %q, %v; want %q", tt.data, tt.encoding, got, err, tt.want)
		}
	}
}

// vsphereOVF is shaped like the OVF environment vSphere passes in
// guestinfo.ovfEnv (DSP0243): the default namespace is the OVF environment
// one, properties use the oe: prefix, and VMware adds its own section.
const vsphereOVF = `<?xml version="1.0" encoding="UTF-8"?>
<Environment
     xmlns="http://schemas.dmtf.org/ovf/environment/1"
     xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xmlns:oe="http://schemas.dmtf.org/ovf/environment/1"
     xmlns:ve="http://www.vmware.com/schema/ovfenv"
     oe:id=""
     ve:vCenterId="vm-4711">
   <PlatformSection>
      <Kind>VMware ESXi</Kind>
      <Version>8.0.2</Version>
      <Vendor>VMware, Inc.</Vendor>
      <Locale>en</Locale>
   </PlatformSection>
   <PropertySection>
         <Property oe:key="guestinfo.hostname" oe:value="node-1"/>
         <Property oe:key="guestinfo.ignition.config.data" oe:value="eyJpZ25pdGlvbiI6eyJ2ZXJzaW9uIjoiMy40LjAifX0="/>
         <Property oe:key="guestinfo.ignition.config.data.encoding" oe:value="base64"/>
         <Property oe:key="answer" oe:value="42"></Property>
   </PropertySection>
   <ve:EthernetAdapterSection>
      <ve:Adapter ve:mac="00:50:56:00:00:01" ve:network="VM Network" ve:unitNumber="7"/>
   </ve:EthernetAdapterSection>
</Environment>`

func TestParseOVFProperties(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    map[string]string
		wantErr bool
	}{
		{
			name: "vsphere",
			doc:  vsphereOVF,
			want: map[string]string{
				"guestinfo.hostname":                      "node-1",
				"guestinfo.ignition.config.data":          "eyJpZ25pdGlvbiI6eyJ2ZXJzaW9uIjoiMy40LjAifX0=",
				"guestinfo.ignition.config.data.encoding": "base64",
				"answer": "42",
			},
		},
		{
			name: "no namespaces, two sections, duplicate key",
			doc: `<Environment><PropertySection><Property key="a" value="1"/></PropertySection>
<PropertySection><Property key="a" value="2"/><Property key="b" value="&lt;x&gt;"/></PropertySection></Environment>`,
			want: map[string]string{"a": "2", "b": "<x>"},
		},
		{
			name: "properties elsewhere are not properties",
			doc:  `<Environment><Other><PropertySection><Property key="a" value="1"/></PropertySection></Other><Property key="b" value="2"/></Environment>`,
			want: map[string]string{},
		},
		{
			name: "trailing garbage after the root is ignored",
			doc:  vsphereOVF + "garbage<",
			want: map[string]string{
				"guestinfo.hostname":                      "node-1",
				"guestinfo.ignition.config.data":          "eyJpZ25pdGlvbiI6eyJ2ZXJzaW9uIjoiMy40LjAifX0=",
				"guestinfo.ignition.config.data.encoding": "base64",
				"answer": "42",
			},
		},
		{name: "unclosed", doc: `<Environment><PropertySection>`, wantErr: true},
		{name: "mismatched", doc: `<Environment></PropertySection>`, wantErr: true},
		{name: "empty", doc: ``, want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOVFProperties([]byte(tt.doc))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseOVFProperties = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseOVFProperties error: %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parseOVFProperties = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPruneOVFProperties(t *testing.T) {
	keys := []string{"guestinfo.ignition.config.data", "guestinfo.ignition.config.data.encoding"}
	pruned, changed, err := pruneOVFProperties([]byte(vsphereOVF), keys...)
	if err != nil || !changed {
		t.Fatalf("pruneOVFProperties = changed %v, error %v; want a change", changed, err)
	}
	want := strings.Replace(vsphereOVF, `
         <Property oe:key="guestinfo.ignition.config.data" oe:value="eyJpZ25pdGlvbiI6eyJ2ZXJzaW9uIjoiMy40LjAifX0="/>
         <Property oe:key="guestinfo.ignition.config.data.encoding" oe:value="base64"/>`, "", 1)
	if string(pruned) != want {
		t.Errorf("pruneOVFProperties =\n%s\nwant\n%s", pruned, want)
	}
	props, err := parseOVFProperties(pruned)
	if err != nil {
		t.Fatalf("pruned document does not parse: %v", err)
	}
	if len(props) != 2 || props["guestinfo.hostname"] != "node-1" || props["answer"] != "42" {
		t.Errorf("pruned document has properties %v, want hostname and answer", props)
	}

	// Pruning again changes nothing and returns the input as is.
	again, changed, err := pruneOVFProperties(pruned, keys...)
	if err != nil || changed || !bytes.Equal(again, pruned) {
		t.Errorf("second pruneOVFProperties = changed %v, error %v, equal %v; want no change", changed, err, bytes.Equal(again, pruned))
	}

	// An element with content and a duplicate go too.
	doc := `<Environment><PropertySection><Property key="k" value="1"><x/></Property><Property key="keep" value="2"/><Property key="k" value="3"/></PropertySection></Environment>`
	pruned, changed, err = pruneOVFProperties([]byte(doc), "k")
	wantDoc := `<Environment><PropertySection><Property key="keep" value="2"/></PropertySection></Environment>`
	if err != nil || !changed || string(pruned) != wantDoc {
		t.Errorf("pruneOVFProperties(%q) = %q, %v, %v; want %q", doc, pruned, changed, err, wantDoc)
	}

	if _, _, err := pruneOVFProperties([]byte(`<Environment>`), "k"); err == nil {
		t.Error("pruneOVFProperties of a broken document succeeded")
	}
}

// fakeGuestRPC answers RPCI commands from a map, like the VMX; errs makes
// the command for a key fail at the transport.
type fakeGuestRPC struct {
	vars map[string]string
	errs map[string]error
	// refuse makes info-set fail with a "0" reply.
	refuse bool
	cmds   []string
}

func (f *fakeGuestRPC) Call(_ context.Context, cmd string) ([]byte, error) {
	f.cmds = append(f.cmds, cmd)
	for key, err := range f.errs {
		if strings.Contains(cmd, " "+key) && (strings.HasSuffix(cmd, key) || strings.HasPrefix(cmd, "info-set "+key+" ")) {
			return nil, err
		}
	}
	if f.refuse && strings.HasPrefix(cmd, "info-set ") {
		return []byte("0 Permission denied"), nil
	}
	if f.vars == nil {
		f.vars = map[string]string{}
	}
	return []byte(guestinfoHandler(f.vars)(cmd)), nil
}

// vmwareRoot returns a root whose DMI says vendor.
func vmwareRoot(t *testing.T, vendor string) string {
	t.Helper()
	root := t.TempDir()
	if vendor != "" {
		dir := filepath.Join(root, "sys/class/dmi/id")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sys_vendor"), []byte(vendor+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func testVMware(t *testing.T, vendor string, rpc guestRPC, openErr error) *vmwareProvider {
	p := newVMware(Env{Root: vmwareRoot(t, vendor), Logger: hvTestLogger(t)}).(*vmwareProvider)
	p.open = func() (guestRPC, error) {
		if openErr != nil {
			return nil, openErr
		}
		return rpc, nil
	}
	return p
}

func TestVMwareFetchConfig(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	b64 := base64.StdEncoding.EncodeToString([]byte(config))
	gzb64 := base64.StdEncoding.EncodeToString([]byte(vmwGzip(t, config)))
	ovf := func(data, encoding string) string {
		return `<?xml version="1.0" encoding="UTF-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1">
  <PropertySection>
    <Property oe:key="guestinfo.ignition.config.data" oe:value="` + data + `"/>
    <Property oe:key="guestinfo.ignition.config.data.encoding" oe:value="` + encoding + `"/>
  </PropertySection>
</Environment>`
	}
	errRPC := errors.New("channel broke")
	tests := []struct {
		name    string
		vendor  string
		openErr error
		vars    map[string]string
		errs    map[string]error
		want    string
		wantErr error
		errText string
	}{
		{name: "plain", vars: map[string]string{"guestinfo.ignition.config.data": config}, want: config},
		{name: "base64", vars: map[string]string{"guestinfo.ignition.config.data": b64, "guestinfo.ignition.config.data.encoding": "base64"}, want: config},
		{name: "gzip+base64", vars: map[string]string{"guestinfo.ignition.config.data": gzb64, "guestinfo.ignition.config.data.encoding": "gzip+base64"}, want: config},
		{name: "OVF only", vars: map[string]string{"guestinfo.ovfenv": ovf(gzb64, "gz+b64")}, want: config},
		{name: "guestinfo wins over OVF", vars: map[string]string{
			"guestinfo.ovfenv":                        ovf("garbage", "gzip"),
			"guestinfo.ignition.config.data":          b64,
			"guestinfo.ignition.config.data.encoding": "b64",
		}, want: config},
		{name: "guestinfo data, OVF encoding", vars: map[string]string{
			"guestinfo.ovfenv":               ovf("", "base64"),
			"guestinfo.ignition.config.data": b64,
		}, want: config},
		{name: "broken OVF is skipped", vars: map[string]string{
			"guestinfo.ovfenv":               "<Environment>",
			"guestinfo.ignition.config.data": config,
		}, want: config},
		{name: "unreadable OVF is skipped", errs: map[string]error{"guestinfo.ovfenv": errRPC}, vars: map[string]string{
			"guestinfo.ignition.config.data": config,
		}, want: config},
		{name: "nothing", vars: map[string]string{}, wantErr: ErrNoConfig},
		{name: "empty data", vars: map[string]string{"guestinfo.ignition.config.data": ""}, wantErr: ErrNoConfig},
		{name: "empty after decoding", vars: map[string]string{"guestinfo.ignition.config.data": "", "guestinfo.ignition.config.data.encoding": "base64"}, wantErr: ErrNoConfig},
		{name: "empty OVF property", vars: map[string]string{"guestinfo.ovfenv": ovf("", "")}, wantErr: ErrNoConfig},
		{name: "bad encoding", vars: map[string]string{"guestinfo.ignition.config.data": config, "guestinfo.ignition.config.data.encoding": "rot13"}, errText: `guestinfo.ignition.config.data: unsupported encoding "rot13"`},
		{name: "bad OVF data", vars: map[string]string{"guestinfo.ovfenv": ovf("!!", "base64")}, errText: "OVF property guestinfo.ignition.config.data: decoding base64"},
		{name: "data unreadable", errs: map[string]error{"guestinfo.ignition.config.data": errRPC}, wantErr: errRPC},
		{name: "encoding unreadable", errs: map[string]error{"guestinfo.ignition.config.data.encoding": errRPC}, vars: map[string]string{"guestinfo.ignition.config.data": config}, wantErr: errRPC},
		{name: "not VMware", vendor: "QEMU", wantErr: ErrNoProvider},
		{name: "no DMI", vendor: "-", wantErr: ErrNoProvider},
		{name: "backdoor unavailable", openErr: fmt.Errorf("faulted: %w", ErrNoProvider), wantErr: ErrNoProvider},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vendor := tt.vendor
			switch vendor {
			case "":
				vendor = "VMware, Inc."
			case "-":
				vendor = ""
			}
			rpc := &fakeGuestRPC{vars: tt.vars, errs: tt.errs}
			got, err := testVMware(t, vendor, rpc, tt.openErr).FetchConfig(context.Background())
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("FetchConfig() = %q, %v; want %v", got, err, tt.wantErr)
				}
			case tt.errText != "":
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("FetchConfig() error = %v, want one containing %q", err, tt.errText)
				}
			default:
				if err != nil || string(got) != tt.want {
					t.Errorf("FetchConfig() = %q, %v; want %q", got, err, tt.want)
				}
			}
			for _, cmd := range rpc.cmds {
				if strings.HasPrefix(cmd, "info-set") {
					t.Errorf("FetchConfig sent %q: fetching must not write", cmd)
				}
			}
		})
	}
}

func TestVMwareDeleteConfig(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	pruned, _, err := pruneOVFProperties([]byte(vsphereOVF), "guestinfo.ignition.config.data", "guestinfo.ignition.config.data.encoding")
	if err != nil {
		t.Fatal(err)
	}
	errRPC := errors.New("channel broke")
	tests := []struct {
		name     string
		vars     map[string]string
		errs     map[string]error
		refuse   bool
		wantVars map[string]string
		wantSets int
		wantErr  bool
	}{
		{
			name:     "plain config",
			vars:     map[string]string{"guestinfo.ignition.config.data": config},
			wantVars: map[string]string{"guestinfo.ignition.config.data": "e30K", "guestinfo.ignition.config.data.encoding": "base64"},
			wantSets: 2,
		},
		{
			name:     "base64 config keeps its encoding",
			vars:     map[string]string{"guestinfo.ignition.config.data": "eyJ9", "guestinfo.ignition.config.data.encoding": "base64"},
			wantVars: map[string]string{"guestinfo.ignition.config.data": "e30K", "guestinfo.ignition.config.data.encoding": "base64"},
			wantSets: 1,
		},
		{
			name:     "already deleted",
			vars:     map[string]string{"guestinfo.ignition.config.data": "e30K", "guestinfo.ignition.config.data.encoding": "base64"},
			wantVars: map[string]string{"guestinfo.ignition.config.data": "e30K", "guestinfo.ignition.config.data.encoding": "base64"},
		},
		{
			name:     "nothing set",
			vars:     map[string]string{},
			wantVars: map[string]string{},
		},
		{
			name:     "OVF pruned",
			vars:     map[string]string{"guestinfo.ovfenv": vsphereOVF},
			wantVars: map[string]string{"guestinfo.ovfenv": string(pruned)},
			wantSets: 1,
		},
		{
			name:     "OVF without the config is left alone",
			vars:     map[string]string{"guestinfo.ovfenv": string(pruned)},
			wantVars: map[string]string{"guestinfo.ovfenv": string(pruned)},
		},
		{name: "OVF unreadable", vars: map[string]string{}, errs: map[string]error{"guestinfo.ovfenv": errRPC}, wantErr: true},
		{name: "OVF broken", vars: map[string]string{"guestinfo.ovfenv": "<Environment>"}, wantErr: true},
		{name: "data unreadable", errs: map[string]error{"guestinfo.ignition.config.data": errRPC}, wantErr: true},
		{name: "set refused", vars: map[string]string{"guestinfo.ignition.config.data": config}, refuse: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rpc := &fakeGuestRPC{vars: tt.vars, errs: tt.errs, refuse: tt.refuse}
			err := testVMware(t, "VMware, Inc.", rpc, nil).DeleteConfig(context.Background())
			if tt.wantErr {
				if err == nil {
					t.Fatal("DeleteConfig() succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("DeleteConfig() error: %v", err)
			}
			if fmt.Sprint(rpc.vars) != fmt.Sprint(tt.wantVars) {
				t.Errorf("after DeleteConfig guestinfo = %v, want %v", rpc.vars, tt.wantVars)
			}
			sets := 0
			for _, cmd := range rpc.cmds {
				if strings.HasPrefix(cmd, "info-set ") {
					sets++
				}
			}
			if sets != tt.wantSets {
				t.Errorf("DeleteConfig sent %d info-set commands, want %d (%q)", sets, tt.wantSets, rpc.cmds)
			}
		})
	}

	p := testVMware(t, "Bochs", &fakeGuestRPC{}, nil)
	if err := p.DeleteConfig(context.Background()); !errors.Is(err, ErrNoProvider) {
		t.Errorf("DeleteConfig on a non-VMware machine = %v, want ErrNoProvider", err)
	}
}

// TestVMwareOverBackdoor runs the provider end to end over the fake VMX:
// guestinfo over RPCI over the message protocol.
func TestVMwareOverBackdoor(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd"}]}}`
	for _, hb := range []bool{false, true} {
		t.Run(fmt.Sprintf("hb=%v", hb), func(t *testing.T) {
			vars := map[string]string{
				"guestinfo.ignition.config.data":          base64.StdEncoding.EncodeToString([]byte(vmwGzip(t, config))),
				"guestinfo.ignition.config.data.encoding": "gzip+base64",
			}
			vmx := newFakeVMX(t, hb, guestinfoHandler(vars))
			p := testVMware(t, "VMware, Inc.", backdoorRPC{bd: vmx}, nil)
			got, err := p.FetchConfig(context.Background())
			if err != nil || string(got) != config {
				t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, config)
			}
			want := []string{"info-get guestinfo.ovfenv", "info-get guestinfo.ignition.config.data", "info-get guestinfo.ignition.config.data.encoding"}
			if fmt.Sprint(vmx.cmds) != fmt.Sprint(want) {
				t.Errorf("VMX received %q, want %q", vmx.cmds, want)
			}
			if err := p.DeleteConfig(context.Background()); err != nil {
				t.Fatalf("DeleteConfig() error: %v", err)
			}
			if vars["guestinfo.ignition.config.data"] != "e30K" || vars["guestinfo.ignition.config.data.encoding"] != "base64" {
				t.Errorf("after DeleteConfig guestinfo = %v", vars)
			}
			if _, err := p.FetchConfig(context.Background()); err != nil {
				// "{}\n" decodes to a (syntactically empty) config,
				// which is the point: it is no longer the secret one.
				t.Errorf("FetchConfig() after DeleteConfig error: %v", err)
			}
			if len(vmx.channels) != 0 || vmx.opened == 0 {
				t.Errorf("channels opened %d, left open %d", vmx.opened, len(vmx.channels))
			}
		})
	}
}

func TestVMwareNetworkKargs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		vars   map[string]string
		want   string
		wantOK bool
	}{
		{"set", map[string]string{"guestinfo.afterburn.initrd.network-kargs": "ip=10.0.0.5::10.0.0.1:255.255.255.0:node:ens192:off"},
			"ip=10.0.0.5::10.0.0.1:255.255.255.0:node:ens192:off", true},
		{"unset", map[string]string{}, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rpc := &fakeGuestRPC{vars: tt.vars}
			got, ok, err := testVMware(t, "VMware, Inc.", rpc, nil).NetworkKargs(context.Background())
			if err != nil || got != tt.want || ok != tt.wantOK {
				t.Errorf("NetworkKargs() = %q, %v, %v; want %q, %v", got, ok, err, tt.want, tt.wantOK)
			}
		})
	}
	if _, _, err := testVMware(t, "QEMU", &fakeGuestRPC{}, nil).NetworkKargs(context.Background()); !errors.Is(err, ErrNoProvider) {
		t.Errorf("NetworkKargs() off VMware = %v, want ErrNoProvider", err)
	}
}
