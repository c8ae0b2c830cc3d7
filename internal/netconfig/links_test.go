package netconfig

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// TestProxmoxVELinks: Afterburn's proxmoxve fixtures (kept in
// testdata/proxmoxve) give the links its networks() builds
// (coreos/afterburn src/providers/proxmoxve/tests.rs asserts the same
// facts); what it refuses is refused.
func TestProxmoxVELinks(t *testing.T) {
	ns := []netip.Addr{netip.MustParseAddr("1.1.1.1"), netip.MustParseAddr("8.8.8.8")}
	for _, tc := range []struct {
		fixture string
		want    []Link
	}{
		{"testdata/proxmoxve/static.yaml", []Link{
			{Name: "eth0", MAC: "01:23:45:67:89:00", Priority: 20, Nameservers: ns,
				Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.1.1/24"), netip.MustParsePrefix("2001:db8:85a3::8a2e:370:0/24")},
				Routes: []Route{{To: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("192.168.1.254")},
					{To: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2001:db8:85a3::8a2e:370:9999")}}},
			{Name: "eth1", MAC: "01:23:45:67:89:99", Priority: 20, Nameservers: ns,
				Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.42.1/24"), netip.MustParsePrefix("2001:db8:85a3::8a2e:4242:0/24")},
				Routes: []Route{{To: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("192.168.42.254")},
					{To: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2001:db8:85a3::8a2e:4242:9999")}}},
		}},
		{"testdata/proxmoxve/dhcp.yaml", []Link{{Name: "eth0", MAC: "01:23:45:67:89:00", Priority: 20, DHCP: DHCPv4, Nameservers: ns}}},
	} {
		c, err := Read(readFixture(t, tc.fixture))
		if err != nil {
			t.Fatalf("Read(%s) = %v", tc.fixture, err)
		}
		got, err := ProxmoxVELinks(c)
		if err != nil || !reflect.DeepEqual(got.Links, tc.want) || got.NetDevs != nil {
			t.Errorf("ProxmoxVELinks(%s) = %+v, %v; want %+v", tc.fixture, got, err, tc.want)
		}
	}
	for _, doc := range []string{
		"version: 1\nconfig:\n  - type: nameserver\n    address: [192.0.2.1]\n  - type: nameserver\n    address: [192.0.2.2]\n",
		"version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - type: static\n",
		"version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - type: static\n        address: 192.0.2.5\n        netmask: 24\n",
	} {
		c, err := Read(readDoc(t, doc))
		if err != nil {
			t.Fatalf("Read(%q) = %v", doc, err)
		}
		if _, err := ProxmoxVELinks(c); !errors.Is(err, ErrInvalid) {
			t.Errorf("ProxmoxVELinks(%q) = %v, want ErrInvalid", doc, err)
		}
	}
	c, _ := Read(readDoc(t, "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n"))
	if got, err := ProxmoxVELinks(c); err != nil || len(got.Links) != 0 {
		t.Errorf("ProxmoxVELinks(version 2) = %+v, %v; want no links", got, err)
	}
}

// TestKubeVirtLinks: Afterburn's kubevirt fixtures (testdata/kubevirt)
// give the links its to_interfaces builds: names, MACs, addresses,
// routes, merged DHCP and the global nameservers on every link.
func TestKubeVirtLinks(t *testing.T) {
	a := netip.MustParseAddr
	p := netip.MustParsePrefix
	dns := []netip.Addr{a("8.8.8.8"), a("8.8.4.4"), a("2001:4860:4860::8888"), a("2001:4860:4860::8844")}
	routes := []Route{{To: p("0.0.0.0/0"), Via: a("192.168.1.1")}, {To: p("::/0"), Via: a("2001:db8::1")}}
	addrs := []netip.Prefix{p("192.168.1.10/24"), p("2001:db8::10/64")}
	for _, tc := range []struct {
		fixture string
		want    []Link
	}{
		{"testdata/kubevirt/nocloud_v1.yaml", []Link{
			{Name: "eth0", Priority: 20, Addresses: addrs, Routes: routes, Nameservers: dns},
			{Name: "eth1", Priority: 20, DHCP: DHCPBoth, Nameservers: dns},
			{Name: "eth2", MAC: "06:aa:bb:cc:dd:02", Priority: 20, DHCP: DHCPv4, Nameservers: dns},
		}},
		{"testdata/kubevirt/config_drive.json", []Link{
			{Name: "eth0", MAC: "06:aa:bb:cc:dd:00", Priority: 20, Addresses: addrs, Routes: routes, Nameservers: dns},
			{Name: "eth1", MAC: "06:aa:bb:cc:dd:01", Priority: 20, DHCP: DHCPBoth, Nameservers: dns},
			{MAC: "06:aa:bb:cc:dd:02", Priority: 20, DHCP: DHCPv4, Nameservers: dns},
		}},
	} {
		c, err := Read(readFixture(t, tc.fixture))
		if err != nil {
			t.Fatalf("Read(%s) = %v", tc.fixture, err)
		}
		if got := KubeVirtLinks(c); !reflect.DeepEqual(got.Links, tc.want) {
			t.Errorf("KubeVirtLinks(%s) =\n%+v\nwant\n%+v", tc.fixture, got.Links, tc.want)
		}
	}
	// Version 1's DHCP as Afterburn merges it, subnet by subnet.
	for _, tc := range []struct {
		types string
		want  DHCPMode
	}{{"dhcp", DHCPv4}, {"dhcp6, dhcp4", DHCPBoth}, {"dhcp, dhcp6, dhcp", DHCPv4}, {"dhcp, dhcp6, dhcp6", DHCPv6}, {"dhcp4, dhcp4", DHCPv4}} {
		doc := "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n"
		for _, typ := range strings.Split(tc.types, ", ") {
			doc += "      - type: " + typ + "\n"
		}
		c, err := Read(readDoc(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := KubeVirtLinks(c).Links[0].DHCP; got != tc.want {
			t.Errorf("KubeVirtLinks(subnets %s) DHCP = %d, want %d", tc.types, got, tc.want)
		}
	}
	// A duplicate global nameserver: version 1 appends it as it is,
	// version 2 once.
	v1, _ := Read(readDoc(t, "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets:\n      - type: dhcp\n        dns_nameservers: [192.0.2.53]\n  - type: nameserver\n    address: [192.0.2.53]\n"))
	v2, _ := Read(readDoc(t, "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n    nameservers:\n      addresses: [192.0.2.53]\nnameservers:\n  addresses: [192.0.2.53]\n"))
	if got := KubeVirtLinks(v1).Links[0].Nameservers; len(got) != 2 {
		t.Errorf("KubeVirtLinks(v1) nameservers = %v, want the address twice", got)
	}
	if got := KubeVirtLinks(v2).Links[0].Nameservers; len(got) != 1 {
		t.Errorf("KubeVirtLinks(v2) nameservers = %v, want the address once", got)
	}
}
