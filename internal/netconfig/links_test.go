package netconfig

import (
	"errors"
	"net/netip"
	"reflect"
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
