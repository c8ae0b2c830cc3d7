package netconfig

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// summary writes what Read found, one interface a line, for comparing.
func summary(c Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format %d", c.Format)
	for _, d := range c.DNS {
		fmt.Fprintf(&b, " dns%v%v", d.Nameservers, d.Search)
	}
	for _, i := range c.Interfaces {
		fmt.Fprintf(&b, "\n%q key=%q mac=%q mtu=%d", i.Name, i.Key, i.MAC, i.MTU)
		for _, s := range i.Subnets {
			switch s.Kind {
			case Static:
				fmt.Fprintf(&b, " static:%v", s.Address)
				if s.PrefixNetmask {
					b.WriteString("(len)")
				}
				if s.Gateway.IsValid() {
					fmt.Fprintf(&b, "/gw:%v", s.Gateway)
				}
			case DHCP4:
				b.WriteString(" dhcp4")
			case DHCP6:
				b.WriteString(" dhcp6")
			}
		}
		for _, r := range i.Routes {
			fmt.Fprintf(&b, " route:%v>%v", r.To, r.Via)
		}
		if len(i.DNS.Nameservers)+len(i.DNS.Search) > 0 {
			fmt.Fprintf(&b, " dns%v%v", i.DNS.Nameservers, i.DNS.Search)
		}
	}
	return b.String()
}

// TestRead: each format into the one type, every key the readers take.
func TestRead(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"v1", `network:
  version: 1
  config:
  - type: physical
    name: eth0
    mac_address: "02:00:00:0A:0B:0C"
    mtu: 9000
    subnets:
    - type: static
      address: 10.0.2.20
      netmask: 255.255.255.0
      gateway: 10.0.2.1
      dns_nameservers: [10.0.2.3, 10.0.2.3]
      dns_search: example.com
    - type: static6
      address: fd00::20
      netmask: "64"
      routes:
      - destination: fd01::/64
        gateway: fd00::1
    - type: dhcp6
    - type: static
    - type: manual
  - type: bond
    name: bond0
  - type: nameserver
    address: [1.1.1.1]
    search: [a.example]
  - type: nameserver
    address: ["2606:4700:4700::1111"]
`, "format 1 dns[1.1.1.1][a.example] dns[2606:4700:4700::1111][]\n" +
			`"eth0" key="" mac="02:00:00:0a:0b:0c" mtu=9000 static:10.0.2.20/24/gw:10.0.2.1 static:fd00::20/64(len) dhcp6 static:invalid Prefix route:0.0.0.0/0>10.0.2.1 route:fd01::/64>fd00::1 dns[10.0.2.3][example.com]`},
		{"v2", `version: 2
ethernets:
  id0:
    match: {macaddress: "06:AA:bb:cc:dd:02"}
    dhcp4: true
    mtu: 1400
  eth1:
    addresses: ["::ffff:192.168.1.10/120", 2001:db8::10/64]
    gateway4: 192.168.1.1
    nameservers: {addresses: [8.8.8.8], search: [corp.example]}
  eth0:
    dhcp6: true
    gateway6: 2001:db8::1
    routes: [{to: 10.10.0.0/16, via: 192.168.1.254}]
nameservers:
  addresses: [9.9.9.9]
`, "format 2 dns[9.9.9.9][]\n" +
			`"eth0" key="eth0" mac="" mtu=0 dhcp6 route:10.10.0.0/16>192.168.1.254` + "\n" +
			`"eth1" key="eth1" mac="" mtu=0 static:192.168.1.10/24 static:2001:db8::10/64 route:0.0.0.0/0>192.168.1.1 dns[8.8.8.8][corp.example]` + "\n" +
			`"" key="id0" mac="06:aa:bb:cc:dd:02" mtu=1400 dhcp4`},
		{"network_data.json", `{
  "links": [
    {"id": "tap0", "ethernet_mac_address": "02:00:00:0a:0b:0c", "mtu": 1500},
    {"id": "tap1", "name": "eth0"},
    {"id": "tap2", "name": "unused"}
  ],
  "networks": [
    {"type": "ipv4", "link": "tap0", "ip_address": "10.0.0.9", "netmask": "255.255.255.0", "dns_nameservers": ["10.0.0.2"]},
    {"type": "ipv6_dhcp", "link": "tap1"},
    {"type": "ipv6", "link": "tap1", "ip_address": "fd10::5", "netmask": "ffff:ffff:ffff:ffff::",
     "routes": [{"network": "::", "netmask": "::", "gateway": "fd10::1"}]},
    {"type": "ipv4", "link": "nowhere", "ip_address": "10.9.9.9"}
  ],
  "services": [{"type": "dns", "address": "8.8.8.8"}, {"type": "ntp", "address": "x"}]
}`, "format 3 dns[8.8.8.8][]\n" +
			`"eth0" key="tap1" mac="" mtu=0 dhcp6 static:fd10::5/64 route:::/0>fd10::1` + "\n" +
			`"" key="tap0" mac="02:00:00:0a:0b:0c" mtu=1500 static:10.0.0.9/24 dns[10.0.0.2][]`},
		{"empty", "", "format 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Read(readDoc(t, tc.doc))
			if err != nil {
				t.Fatalf("Read() = %v", err)
			}
			if got := summary(c); got != tc.want {
				t.Errorf("Read() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestReadRefuses: malformed descriptions are refused, naming where,
// never quoting the value.
func TestReadRefuses(t *testing.T) {
	phys := "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n    address: 10.0.0.2\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"not a mapping", "- a\n", "the document: not a mapping"},
		{"version", "version: 3\n", "network config version 3"},
		{"netmask not contiguous", phys + "    netmask: 255.0.255.0\n", "config entry 0 subnet 0 address netmask: not contiguous"},
		{"netmask of the other family", phys + "    netmask: 'ffff:ff00::'\n", "config entry 0 subnet 0 address netmask: not of the address's family"},
		{"netmask too long", phys + "    netmask: '33'\n", "neither an address nor a prefix length"},
		{"gateway", phys + "    gateway: 10.0.0.secret\n", "config entry 0 subnet 0 gateway: not an IP address"},
		{"address with a zone", phys[:len(phys)-9] + "fe80::1%secret\n", "subnet 0 address: not an IP address"},
		{"mac", "config:\n- type: physical\n  mac_address: secret\n", "config entry 0 MAC address: not one"},
		{"mtu", "config:\n- type: physical\n  mtu: secret\n", "config entry 0 mtu: not a number"},
		{"nameserver", "config:\n- type: nameserver\n  address: [secret]\n", "config entry 0 nameserver: not an IP address"},
		{"v2 prefix", "ethernets:\n  eth0:\n    addresses: [10.0.0.1/secret]\n", "ethernet eth0 address 0: not an IP address with a prefix length"},
		{"v2 mapping address", "ethernets:\n  eth0:\n    addresses: [{10.0.0.1/24: {label: secret}}]\n", "a mapping, want"},
		{"v2 route", "ethernets:\n  eth0:\n    routes: [{to: 10.0.0.0/8}]\n", "ethernet eth0 route 0 via: not an IP address"},
		{"openstack route", `{"links": [{"id": "a"}], "networks": [{"link": "a", "routes": [{"network": "10.0.0.0", "netmask": "secret", "gateway": "10.0.0.1"}]}]}`, "network 0 route 0 network netmask"},
		{"openstack service", `{"links": [], "services": [{"type": "dns", "address": "secret"}]}`, "service 0 address: not an IP address"},
	} {
		c, err := Read(readDoc(t, tc.doc))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Read() = %+v, %v; want ErrInvalid saying %q", tc.name, c, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error quotes the document: %v", tc.name, err)
		}
	}
}

// TestAddresses: the attributes' picks, as Afterburn's kubevirt and
// proxmoxve make them.
func TestAddresses(t *testing.T) {
	doc := "config:\n- type: physical\n- type: physical\n  subnets:\n" +
		"  - {type: static, address: 10.0.0.1/24}\n  - {type: static6, address: 'fd00::1/64'}\n" +
		"  - {type: static, address: 10.0.0.2/24}\n  - {type: static6, address: 'fd00::2/64'}\n"
	c, err := Read(readDoc(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	mustAddr := netip.MustParseAddr
	if v4, v6 := KubeVirtAddresses(c); v4 != mustAddr("10.0.0.1") || v6 != mustAddr("fd00::1") {
		t.Errorf("KubeVirtAddresses() = %v, %v, want the first of each family of the second interface", v4, v6)
	}
	if v4, v6 := ProxmoxVEAddresses(c); v4.IsValid() || v6.IsValid() {
		t.Errorf("ProxmoxVEAddresses() = %v, %v, want none: the first interface has no address", v4, v6)
	}
	c.Interfaces = c.Interfaces[1:]
	if v4, v6 := ProxmoxVEAddresses(c); v4 != mustAddr("10.0.0.2") || v6 != mustAddr("fd00::2") {
		t.Errorf("ProxmoxVEAddresses() = %v, %v, want the last of each family", v4, v6)
	}
	// Proxmox VE's arguments refuse what Afterburn's proxmoxve cannot
	// read; KubeVirt's take it.
	c, err = Read(readDoc(t, "config:\n- type: physical\n  name: eth0\n  subnets:\n  - {type: static, address: 10.0.0.1, netmask: '24'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ProxmoxVEKargs(c); !errors.Is(err, ErrInvalid) {
		t.Errorf("ProxmoxVEKargs(netmask: 24) = %q, %v, want ErrInvalid", got, err)
	}
	if got, want := KubeVirtKargs(c), "ip=10.0.0.1:::255.255.255.0::eth0:static"; got != want {
		t.Errorf("KubeVirtKargs(netmask: 24) = %q, want %q", got, want)
	}
}
