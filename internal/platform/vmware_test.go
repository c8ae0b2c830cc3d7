package platform

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/guestchan/vmware"
	"github.com/flintboot/flint/internal/guestchan/vmware/vmwaretest"
)

// hvTestLogger sends the hypervisor providers' logs to t.Log.
func hvTestLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(hvLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// checkFetchConfig checks what a hypervisor provider's FetchConfig gave:
// an error that is wantErr, one whose text holds errText, or else the
// config want.
func checkFetchConfig(t *testing.T, got []byte, err error, want string, wantErr error, errText string) {
	t.Helper()
	switch {
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Errorf("FetchConfig() = %.40q, %v; want %v", got, err, wantErr)
		}
	case errText != "":
		if err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("FetchConfig() error = %v, want one containing %q", err, errText)
		}
	default:
		if err != nil || string(got) != want {
			t.Errorf("FetchConfig() = %.40q, %v; want %.40q", got, err, want)
		}
	}
}

type hvLogWriter struct{ t *testing.T }

func (w hvLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func TestDecodeGuestinfo(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	b64 := base64.StdEncoding.EncodeToString([]byte(config))
	gz := string(mdGzip(t, []byte(config)))
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

func testVMware(t *testing.T, vendor string, rpc vmware.RPC, openErr error) *vmwareProvider {
	p := newVMware(Env{Root: vmwareRoot(t, vendor), Logger: hvTestLogger(t)}).(*vmwareProvider)
	p.open = func() (vmware.RPC, error) {
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
	gzb64 := base64.StdEncoding.EncodeToString(mdGzip(t, []byte(config)))
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
		{name: "backdoor unreachable", openErr: fmt.Errorf("faulted: %w", vmware.ErrUnreachable), wantErr: ErrNoProvider},
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
			rpc := &vmwaretest.RPC{Vars: tt.vars, Errs: tt.errs}
			got, err := testVMware(t, vendor, rpc, tt.openErr).FetchConfig(context.Background())
			checkFetchConfig(t, got, err, tt.want, tt.wantErr, tt.errText)
			for _, cmd := range rpc.Cmds {
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
			rpc := &vmwaretest.RPC{Vars: tt.vars, Errs: tt.errs, Refuse: tt.refuse}
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
			if fmt.Sprint(rpc.Vars) != fmt.Sprint(tt.wantVars) {
				t.Errorf("after DeleteConfig guestinfo = %v, want %v", rpc.Vars, tt.wantVars)
			}
			sets := 0
			for _, cmd := range rpc.Cmds {
				if strings.HasPrefix(cmd, "info-set ") {
					sets++
				}
			}
			if sets != tt.wantSets {
				t.Errorf("DeleteConfig sent %d info-set commands, want %d (%q)", sets, tt.wantSets, rpc.Cmds)
			}
		})
	}

	p := testVMware(t, "Bochs", &vmwaretest.RPC{}, nil)
	if err := p.DeleteConfig(context.Background()); !errors.Is(err, ErrNoProvider) {
		t.Errorf("DeleteConfig on a non-VMware machine = %v, want ErrNoProvider", err)
	}
}

// TestVMwareOverBackdoor runs the provider end to end over a recording
// RPC (package guestchan/vmware runs guestinfo over its fake VMX,
// TestGuestinfoOverBackdoor): the commands it sends, the config it reads,
// what DeleteConfig leaves.
func TestVMwareOverBackdoor(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd"}]}}`
	vars := map[string]string{
		"guestinfo.ignition.config.data":          base64.StdEncoding.EncodeToString(mdGzip(t, []byte(config))),
		"guestinfo.ignition.config.data.encoding": "gzip+base64",
	}
	rpc := &vmwaretest.RPC{Vars: vars}
	p := testVMware(t, "VMware, Inc.", rpc, nil)
	got, err := p.FetchConfig(context.Background())
	if err != nil || string(got) != config {
		t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, config)
	}
	want := []string{"info-get guestinfo.ovfenv", "info-get guestinfo.ignition.config.data", "info-get guestinfo.ignition.config.data.encoding"}
	if fmt.Sprint(rpc.Cmds) != fmt.Sprint(want) {
		t.Errorf("VMX received %q, want %q", rpc.Cmds, want)
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
			rpc := &vmwaretest.RPC{Vars: tt.vars}
			got, ok, err := testVMware(t, "VMware, Inc.", rpc, nil).NetworkKargs(context.Background())
			if err != nil || got != tt.want || ok != tt.wantOK {
				t.Errorf("NetworkKargs() = %q, %v, %v; want %q, %v", got, ok, err, tt.want, tt.wantOK)
			}
		})
	}
	if _, _, err := testVMware(t, "QEMU", &vmwaretest.RPC{}, nil).NetworkKargs(context.Background()); !errors.Is(err, ErrNoProvider) {
		t.Errorf("NetworkKargs() off VMware = %v, want ErrNoProvider", err)
	}
}

// TestVMwareNetplanDoc: guestinfo.metadata in each of Afterburn's
// encodings (src/providers/vmware/amd64.rs, parse_metadata) gives the
// netplan document of its network key.
func TestVMwareNetplanDoc(t *testing.T) {
	const meta = "instance-id: vm1\nnetwork:\n  version: 2\n  ethernets:\n    nics:\n      match:\n        name: ens*\n      dhcp4: yes\n"
	const want = "network:\n  ethernets:\n    nics:\n      dhcp4: yes\n      match:\n        name: ens*\n  version: 2\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(meta))
	gzb64 := base64.StdEncoding.EncodeToString(mdGzip(t, []byte(meta)))
	for _, tt := range []struct {
		name    string
		vars    map[string]string
		want    string
		wantErr string
	}{
		{"raw", map[string]string{"guestinfo.metadata": meta}, want, ""},
		{"empty encoding", map[string]string{"guestinfo.metadata": meta, "guestinfo.metadata.encoding": ""}, want, ""},
		{"base64", map[string]string{"guestinfo.metadata": b64, "guestinfo.metadata.encoding": "base64"}, want, ""},
		{"b64", map[string]string{"guestinfo.metadata": b64, "guestinfo.metadata.encoding": "b64"}, want, ""},
		{"gzip+base64", map[string]string{"guestinfo.metadata": gzb64, "guestinfo.metadata.encoding": "gzip+base64"}, want, ""},
		{"gz+b64", map[string]string{"guestinfo.metadata": gzb64, "guestinfo.metadata.encoding": "gz+b64"}, want, ""},
		{"none", map[string]string{}, "", ""},
		{"unknown encoding", map[string]string{"guestinfo.metadata": meta, "guestinfo.metadata.encoding": "zstd"}, "", "unknown guestinfo.metadata.encoding 'zstd'"},
		{"encoding without metadata", map[string]string{"guestinfo.metadata.encoding": "base64"}, "", "unknown guestinfo.metadata.encoding 'base64'"},
		{"no network key", map[string]string{"guestinfo.metadata": "instance-id: vm1\n"}, "", "no 'network' key found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testVMware(t, "VMware, Inc.", &vmwaretest.RPC{Vars: tt.vars}, nil).NetplanDoc(context.Background())
			if string(got) != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NetplanDoc() = %q, %v; want %q, %q", got, err, tt.want, tt.wantErr)
			}
			if tt.name == "none" && got != nil {
				t.Errorf("NetplanDoc() without metadata = %q, want nil", got)
			}
		})
	}
}
