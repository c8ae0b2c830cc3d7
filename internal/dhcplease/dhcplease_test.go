package dhcplease

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, data        string
		server, option245 string // "" = none
	}{
		{"networkd", "# This is private data. Do not parse.\nADDRESS=10.1.1.5\nSERVER_ADDRESS=10.1.1.1\nOPTION_245=A83F8110\n", "10.1.1.1", "168.63.129.16"},
		{"networkd without either", "ADDRESS=10.0.0.5\n", "", ""},
		{"networkd garbage", "SERVER_ADDRESS=router\nOPTION_245=A83F81\n", "", ""},
		{"networkd zone refused", "SERVER_ADDRESS=fe80::1%eth0\n", "", ""},
		{"dhclient, newest block wins", "lease {\n  interface \"eth0\";\n  option dhcp-server-identifier 10.0.0.1;\n  option unknown-245 a:d:e:f;\n}\nlease {\n  interface \"eth0\";\n  option dhcp-server-identifier 10.0.0.2;\n  option unknown-245 a8:3f:81:10;\n}\n", "10.0.0.2", "168.63.129.16"},
		{"dhclient garbage", "lease {\n  option unknown-245 a8:3f:zz:10;\n  option dhcp-server-identifier nope;\n}\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Parse([]byte(tc.data))
			if got := addrString(l.Server); got != tc.server {
				t.Errorf("Parse().Server = %q, want %q", got, tc.server)
			}
			if got := addrString(l.Option245); got != tc.option245 {
				t.Errorf("Parse().Option245 = %q, want %q", got, tc.option245)
			}
		})
	}
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func TestReadOrder(t *testing.T) {
	root := t.TempDir()
	for p, content := range map[string]string{
		"run/systemd/netif/leases/10":                    "SERVER_ADDRESS=192.0.2.10\n",
		"run/systemd/netif/leases/2":                     "SERVER_ADDRESS=192.0.2.2\n",
		"var/lib/NetworkManager/internal-x-eth0.lease":   "SERVER_ADDRESS=192.0.2.3\n",
		"var/lib/dhclient/dhclient--eth0.lease":          "lease {\n option dhcp-server-identifier 192.0.2.4;\n}\n",
		"var/lib/dhcp/dhclient.eth1.leases":              "lease {\n option dhcp-server-identifier 192.0.2.5;\n}\n",
		"var/lib/NetworkManager/NetworkManager.state":    "SERVER_ADDRESS=192.0.2.99\n",
		"run/systemd/netif/leases/subdir/not-a-lease-99": "SERVER_ADDRESS=192.0.2.98\n",
	} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, l := range Read(func(p string) string { return filepath.Join(root, p) }) {
		got = append(got, addrString(l.Server))
	}
	want := []string{"192.0.2.2", "192.0.2.10", "192.0.2.3", "192.0.2.4", "192.0.2.5"}
	if len(got) != len(want) {
		t.Fatalf("Read() servers = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Read() servers = %v, want %v", got, want)
		}
	}
	if l := Read(func(p string) string { return filepath.Join(t.TempDir(), p) }); len(l) != 0 {
		t.Errorf("Read() of an empty root = %v, want none", l)
	}
}
