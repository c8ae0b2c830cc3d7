package netconfig

import (
	"net/netip"
	"testing"
)

// packetNetwork is an Equinix Metal machine as Afterburn's packet provider
// builds it: two slaves of bond0, bond0 with the addresses, the fallback
// for every other NIC, and the bond device.
func packetNetwork() Network {
	bondSections := []Section{{Name: "Bond", Keys: [][2]string{{"TransmitHashPolicy", "layer3+4"}, {"Mode", "802.3ad"}}}}
	nmSections := []Section{{Name: "bond", Keys: [][2]string{{"xmit_hash_policy", "layer3+4"}, {"mode", "802.3ad"}}}}
	return Network{
		Links: []Link{
			{MAC: "0c:c4:7a:00:00:01", Priority: 10, Bond: "bond0", RequiredForOnline: "no"},
			{MAC: "0c:c4:7a:00:00:02", Priority: 10, Bond: "bond0", RequiredForOnline: "no"},
			{Name: "bond0", Priority: 5, RequiredForOnline: "degraded-carrier",
				Nameservers: []netip.Addr{netip.MustParseAddr("147.75.207.207"), netip.MustParseAddr("2001:db8::53")},
				Addresses:   []netip.Prefix{netip.MustParsePrefix("198.51.100.7/31"), netip.MustParsePrefix("2001:db8:1::3/127"), netip.MustParsePrefix("10.64.2.3/31")},
				Routes: []Route{
					{To: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("198.51.100.6")},
					{To: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2001:db8:1::2")},
					{To: netip.MustParsePrefix("10.0.0.0/8"), Via: netip.MustParseAddr("10.64.2.2")},
				}},
			{Path: "pci-*", Priority: 80, Unmanaged: true},
		},
		NetDevs: []NetDev{{Name: "bond0", Kind: Bond, MAC: "0c:c4:7a:00:00:01", Priority: 5, Networkd: bondSections, NM: nmSections}},
	}
}

// doNetwork is a DigitalOcean droplet: static addresses by MAC, no DHCP.
func doNetwork() Network {
	return Network{Links: []Link{{
		MAC: "52:54:00:aa:bb:cc", Priority: 10,
		Nameservers: []netip.Addr{netip.MustParseAddr("203.0.113.53")},
		Addresses:   []netip.Prefix{netip.MustParsePrefix("203.0.113.9/20"), netip.MustParsePrefix("2001:db8:2::9/64")},
		Routes: []Route{
			{To: netip.MustParsePrefix("203.0.113.9/20"), Via: netip.MustParseAddr("203.0.112.1")},
			{To: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("203.0.112.1")},
			{To: netip.MustParsePrefix("2001:db8:2::9/64"), Via: netip.MustParseAddr("2001:db8:2::1")},
			{To: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2001:db8:2::1")},
		},
	}}}
}

// hetznerNetwork is a Hetzner server: eth0 on DHCPv4 with a static IPv6
// address and its gateway.
func hetznerNetwork() Network {
	return Network{Links: []Link{{
		Name: "eth0", MAC: "96:00:00:00:00:01", Priority: 20, DHCP: DHCPv4,
		Nameservers: []netip.Addr{netip.MustParseAddr("2001:db8:ff::1"), netip.MustParseAddr("2001:db8:ff::2")},
		Addresses:   []netip.Prefix{netip.MustParsePrefix("2001:db8:3::1/64")},
		Routes:      []Route{{To: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("fe80::1")}},
	}}}
}

func files(fs []File) map[string]File {
	m := map[string]File{}
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}

func TestNetworkdUnits(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    Network
		want map[string]string
	}{{
		name: "packet",
		n:    packetNetwork(),
		want: map[string]string{
			"10-0c:c4:7a:00:00:01.network": "[Match]\nMACAddress=0c:c4:7a:00:00:01\n\n[Network]\nBond=bond0\n\n[Link]\nRequiredForOnline=no\n",
			"10-0c:c4:7a:00:00:02.network": "[Match]\nMACAddress=0c:c4:7a:00:00:02\n\n[Network]\nBond=bond0\n\n[Link]\nRequiredForOnline=no\n",
			"05-bond0.network": "[Match]\nName=bond0\n\n[Network]\nDNS=147.75.207.207\nDNS=2001:db8::53\n\n[Link]\nRequiredForOnline=degraded-carrier\n" +
				"\n[Address]\nAddress=198.51.100.7/31\n\n[Address]\nAddress=2001:db8:1::3/127\n\n[Address]\nAddress=10.64.2.3/31\n" +
				"\n[Route]\nDestination=0.0.0.0/0\nGateway=198.51.100.6\n\n[Route]\nDestination=::/0\nGateway=2001:db8:1::2\n\n[Route]\nDestination=10.0.0.0/8\nGateway=10.64.2.2\n",
			"80-pci-*.network": "[Match]\nPath=pci-*\n\n[Network]\n\n[Link]\nUnmanaged=yes\n",
			"05-bond0.netdev":  "[NetDev]\nName=bond0\nKind=bond\nMACAddress=0c:c4:7a:00:00:01\n\n[Bond]\nTransmitHashPolicy=layer3+4\nMode=802.3ad\n",
		},
	}, {
		name: "digitalocean",
		n:    doNetwork(),
		want: map[string]string{
			"10-52:54:00:aa:bb:cc.network": "[Match]\nMACAddress=52:54:00:aa:bb:cc\n\n[Network]\nDNS=203.0.113.53\n" +
				"\n[Address]\nAddress=203.0.113.9/20\n\n[Address]\nAddress=2001:db8:2::9/64\n" +
				"\n[Route]\nDestination=203.0.113.9/20\nGateway=203.0.112.1\n\n[Route]\nDestination=0.0.0.0/0\nGateway=203.0.112.1\n" +
				"\n[Route]\nDestination=2001:db8:2::9/64\nGateway=2001:db8:2::1\n\n[Route]\nDestination=::/0\nGateway=2001:db8:2::1\n",
		},
	}, {
		name: "hetzner",
		n:    hetznerNetwork(),
		want: map[string]string{
			"20-eth0.network": "[Match]\nName=eth0\nMACAddress=96:00:00:00:00:01\n\n[Network]\nDHCP=ipv4\nDNS=2001:db8:ff::1\nDNS=2001:db8:ff::2\n" +
				"\n[Address]\nAddress=2001:db8:3::1/64\n\n[Route]\nDestination=::/0\nGateway=fe80::1\n",
		},
	}, {
		name: "netdev without priority",
		n:    Network{NetDevs: []NetDev{{Name: "vlan7", Kind: VLAN, MAC: "02:00:00:00:00:07"}}},
		want: map[string]string{"10-vlan7.netdev": "[NetDev]\nName=vlan7\nKind=vlan\nMACAddress=02:00:00:00:00:07\n"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NetworkdUnits(tc.n)
			if err != nil {
				t.Fatalf("NetworkdUnits() = %v", err)
			}
			checkFiles(t, "NetworkdUnits", got, tc.want, 0o644)
		})
	}
	if _, err := NetworkdUnits(Network{Links: []Link{{Priority: 10}}}); err == nil {
		t.Errorf("NetworkdUnits(a link without name, MAC or path) = nil, want an error")
	}
}

func checkFiles(t *testing.T, fn string, got []File, want map[string]string, mode uint32) {
	t.Helper()
	m := files(got)
	if len(got) != len(want) || len(m) != len(want) {
		var names []string
		for _, f := range got {
			names = append(names, f.Name)
		}
		t.Errorf("%s() names = %q, want %d files", fn, names, len(want))
	}
	for name, data := range want {
		f, ok := m[name]
		if !ok {
			t.Errorf("%s() has no %s", fn, name)
			continue
		}
		if string(f.Data) != data {
			t.Errorf("%s() %s =\n%s\nwant\n%s", fn, name, f.Data, data)
		}
		if f.Mode != mode {
			t.Errorf("%s() %s mode = %o, want %o", fn, name, f.Mode, mode)
		}
	}
}

func TestNMKeyfiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     Network
		want  map[string]string
		order []string
	}{{
		name: "packet",
		n:    packetNetwork(),
		want: map[string]string{
			"bond0.nmconnection": "[connection]\nid=bond0\ntype=bond\ninterface-name=bond0\nautoconnect=true\nautoconnect-priority=994\n" +
				"\n[bond]\nxmit_hash_policy=layer3+4\nmode=802.3ad\n\n[ethernet]\ncloned-mac-address=0c:c4:7a:00:00:01\n" +
				"\n[ipv4]\nmethod=manual\naddress1=198.51.100.7/31\naddress2=10.64.2.3/31\ngateway=198.51.100.6\nroute1=10.0.0.0/8,10.64.2.2,0\ndns=147.75.207.207;\n" +
				"\n[ipv6]\nmethod=manual\naddress1=2001:db8:1::3/127\ngateway=2001:db8:1::2\ndns=2001:db8::53;\n",
			"0c:c4:7a:00:00:01.nmconnection": "[connection]\nid=0c:c4:7a:00:00:01\ntype=ethernet\nautoconnect=true\nautoconnect-priority=989\nmaster=bond0\nslave-type=bond\n" +
				"\n[ethernet]\nmac-address=0c:c4:7a:00:00:01\n\n[ipv4]\nmethod=disabled\n\n[ipv6]\nmethod=disabled\n",
			"0c:c4:7a:00:00:02.nmconnection": "[connection]\nid=0c:c4:7a:00:00:02\ntype=ethernet\nautoconnect=true\nautoconnect-priority=989\nmaster=bond0\nslave-type=bond\n" +
				"\n[ethernet]\nmac-address=0c:c4:7a:00:00:02\n\n[ipv4]\nmethod=disabled\n\n[ipv6]\nmethod=disabled\n",
			"pci-*.nmconnection": "[connection]\nid=pci-*\ntype=ethernet\nautoconnect=true\nautoconnect-priority=919\n\n[ipv4]\nmethod=disabled\n\n[ipv6]\nmethod=disabled\n",
		},
		order: []string{"bond0.nmconnection", "0c:c4:7a:00:00:01.nmconnection", "0c:c4:7a:00:00:02.nmconnection", "pci-*.nmconnection"},
	}, {
		name: "digitalocean",
		n:    doNetwork(),
		want: map[string]string{
			"52:54:00:aa:bb:cc.nmconnection": "[connection]\nid=52:54:00:aa:bb:cc\ntype=ethernet\nautoconnect=true\nautoconnect-priority=989\n" +
				"\n[ethernet]\nmac-address=52:54:00:aa:bb:cc\n" +
				"\n[ipv4]\nmethod=manual\naddress1=203.0.113.9/20\ngateway=203.0.112.1\nroute1=203.0.113.9/20,203.0.112.1,0\ndns=203.0.113.53;\n" +
				"\n[ipv6]\nmethod=manual\naddress1=2001:db8:2::9/64\ngateway=2001:db8:2::1\nroute1=2001:db8:2::9/64,2001:db8:2::1,0\n",
		},
	}, {
		name: "hetzner",
		n:    hetznerNetwork(),
		want: map[string]string{
			"eth0.nmconnection": "[connection]\nid=eth0\ntype=ethernet\nautoconnect=true\nautoconnect-priority=979\n" +
				"\n[ethernet]\nmac-address=96:00:00:00:00:01\n\n[ipv4]\nmethod=auto\n" +
				"\n[ipv6]\nmethod=manual\naddress1=2001:db8:3::1/64\ngateway=fe80::1\ndns=2001:db8:ff::1;2001:db8:ff::2;\n",
		},
	}, {
		name: "name only, both families on DHCP, a VLAN",
		n: Network{
			Links:   []Link{{Name: "ens3", Priority: 1000, DHCP: DHCPBoth}},
			NetDevs: []NetDev{{Name: "vlan7", Kind: VLAN, MAC: "02:00:00:00:00:07", NM: []Section{{Name: "vlan", Keys: [][2]string{{"id", "7"}, {"parent", "ens3"}}}}}},
		},
		want: map[string]string{
			"ens3.nmconnection":  "[connection]\nid=ens3\ntype=ethernet\ninterface-name=ens3\nautoconnect=true\nautoconnect-priority=0\n\n[ipv4]\nmethod=auto\n\n[ipv6]\nmethod=auto\n",
			"vlan7.nmconnection": "[connection]\nid=vlan7\ntype=vlan\ninterface-name=vlan7\nautoconnect=true\n\n[vlan]\nid=7\nparent=ens3\n",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NMKeyfiles(tc.n)
			if err != nil {
				t.Fatalf("NMKeyfiles() = %v", err)
			}
			checkFiles(t, "NMKeyfiles", got, tc.want, 0o600)
			for i, name := range tc.order {
				if i < len(got) && got[i].Name != name {
					t.Errorf("NMKeyfiles()[%d] = %s, want %s", i, got[i].Name, name)
				}
			}
		})
	}
}

func TestNetplan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     Network
		style NetplanStyle
		want  string
	}{{
		name: "hetzner",
		n:    hetznerNetwork(), style: NetplanHetzner,
		want: "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n      addresses:\n      - 2001:db8:3::1/64\n" +
			"      routes:\n      - to: ::/0\n        via: fe80::1\n      nameservers:\n        addresses:\n        - 2001:db8:ff::1\n        - 2001:db8:ff::2\n",
	}, {
		name: "proxmoxve: no version, no routes",
		n:    hetznerNetwork(), style: NetplanProxmoxVE,
		want: "network:\n  ethernets:\n    eth0:\n      dhcp4: true\n      addresses:\n      - 2001:db8:3::1/64\n" +
			"      nameservers:\n        addresses:\n        - 2001:db8:ff::1\n        - 2001:db8:ff::2\n",
	}, {
		name: "unnamed links left out",
		n:    doNetwork(), style: NetplanHetzner,
		want: "network:\n  version: 2\n  ethernets: {}\n",
	}, {
		name: "empty link, both DHCP, a name that reads as a boolean",
		n:    Network{Links: []Link{{Name: "eth1"}, {Name: "yes", DHCP: DHCPBoth}}}, style: NetplanHetzner,
		want: "network:\n  version: 2\n  ethernets:\n    eth1: {}\n    'yes':\n      dhcp4: true\n      dhcp6: true\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Netplan(tc.n, tc.style)); got != tc.want {
				t.Errorf("Netplan() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestDHCPMerge(t *testing.T) {
	for _, tc := range []struct{ a, b, want DHCPMode }{
		{NoDHCP, DHCPv4, DHCPv4}, {DHCPv4, DHCPv4, DHCPv4}, {DHCPv6, DHCPv6, DHCPv6},
		{DHCPv4, DHCPv6, DHCPBoth}, {DHCPBoth, DHCPv4, DHCPBoth}, {DHCPv6, NoDHCP, DHCPv6},
	} {
		if got := tc.a.Merge(tc.b); got != tc.want {
			t.Errorf("%d.Merge(%d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
