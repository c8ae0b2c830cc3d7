package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hetznerNetworkConfig is a Hetzner server's network-config: eth0 on
// DHCPv4 with a static IPv6 address.
const hetznerNetworkConfig = `version: 1
config:
  - type: physical
    name: eth0
    mac_address: 96:00:00:ab:cd:01
    subnets:
      - type: dhcp
        ipv4: true
      - type: static
        address: 2001:db8:7::1/64
        ipv6: true
        gateway: fe80::1
        dns_nameservers:
          - 2001:db8:53::1
`

// TestNetworkOutputs: `afterburn multi` and `flint agent` write the
// network units, NetworkManager keyfiles and netplan document of a
// Hetzner server from a fake metadata service, with Afterburn's names,
// contents and modes; a platform without network metadata gets the
// directory and nothing in it.
func TestNetworkOutputs(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path != "/hetzner/v1/metadata/network-config" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(hetznerNetworkConfig))
	}))
	defer srv.Close()
	unit := "[Match]\nName=eth0\nMACAddress=96:00:00:ab:cd:01\n\n[Network]\nDHCP=ipv4\nDNS=2001:db8:53::1\n\n[Address]\nAddress=2001:db8:7::1/64\n\n[Route]\nDestination=::/0\nGateway=fe80::1\n"
	keyfile := "[connection]\nid=eth0\ntype=ethernet\nautoconnect=true\nautoconnect-priority=979\n\n[ethernet]\nmac-address=96:00:00:ab:cd:01\n\n[ipv4]\nmethod=auto\n\n[ipv6]\nmethod=manual\naddress1=2001:db8:7::1/64\ngateway=fe80::1\ndns=2001:db8:53::1;\n"
	netplan := "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n      addresses:\n      - 2001:db8:7::1/64\n      routes:\n      - to: ::/0\n        via: fe80::1\n      nameservers:\n        addresses:\n        - 2001:db8:53::1\n"
	want := map[string]struct {
		data string
		mode os.FileMode
	}{
		"units/20-eth0.network":     {unit, 0o644},
		"nm/eth0.nmconnection":      {keyfile, 0o600},
		"netplan/50-afterburn.yaml": {netplan, 0o644},
	}
	check := func(t *testing.T, dir string) {
		t.Helper()
		for name, w := range want {
			p := filepath.Join(dir, name)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if string(data) != w.data {
				t.Errorf("%s =\n%s\nwant\n%s", name, data, w.data)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != w.mode {
				t.Errorf("%s mode = %o, want %o", name, fi.Mode().Perm(), w.mode)
			}
		}
		for _, d := range []string{"units", "nm", "netplan"} {
			if es, _ := os.ReadDir(filepath.Join(dir, d)); len(es) != 1 {
				t.Errorf("%s holds %d files, want 1", d, len(es))
			}
		}
	}

	t.Run("afterburn", func(t *testing.T) {
		root := abRoot(t, "ignition.platform.id=hetzner")
		var out, errb bytes.Buffer
		err := runAs(context.Background(), "afterburn", []string{"multi", "--provider", "hetzner",
			"--network-units", "/units", "--networkmanager-profiles", "/nm", "--netplan-config", "/netplan",
			"--flint-root", root, "--flint-endpoint", srv.URL}, strings.NewReader(""), &out, &errb)
		if err != nil {
			t.Fatalf("afterburn multi = %v\n%s", err, errb.String())
		}
		check(t, root)
	})
	t.Run("agent", func(t *testing.T) {
		dir := t.TempDir()
		for _, c := range [][2]string{{"network-units", "units"}, {"nm-keyfiles", "nm"}, {"netplan", "netplan"}} {
			var out bytes.Buffer
			err := runAgent(context.Background(), []string{c[0], "-platform", "hetzner", "-root", t.TempDir(), "-endpoint", srv.URL, "-log-to-stdout", filepath.Join(dir, c[1])}, strings.NewReader(""), &out)
			if err != nil {
				t.Fatalf("agent %s = %v\n%s", c[0], err, out.String())
			}
		}
		check(t, dir)
	})
	t.Run("no network metadata", func(t *testing.T) {
		root := abRoot(t, "ignition.platform.id=aws")
		n := len(asked)
		var out, errb bytes.Buffer
		err := runAs(context.Background(), "afterburn", []string{"multi", "--provider", "aws",
			"--network-units", "/units", "--networkmanager-profiles", "/nm",
			"--flint-root", root, "--flint-endpoint", srv.URL}, strings.NewReader(""), &out, &errb)
		if err != nil {
			t.Fatalf("afterburn multi on aws = %v\n%s", err, errb.String())
		}
		for _, d := range []string{"units", "nm"} {
			es, err := os.ReadDir(filepath.Join(root, d))
			if err != nil || len(es) != 0 {
				t.Errorf("aws: %s = %d files, %v; want an empty directory", d, len(es), err)
			}
		}
		if len(asked) != n {
			t.Errorf("aws: asked %q, want no request", asked[n:])
		}
		err = runAgent(context.Background(), []string{"network-units", "-platform", "aws", "-root", root, "-log-to-stdout", filepath.Join(root, "u2")}, strings.NewReader(""), &out)
		if err == nil {
			t.Errorf("flint agent network-units on aws = nil, want an error (not offered)")
		}
	})
}
