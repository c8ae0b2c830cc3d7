package netconfig

// Links from a network description, as Afterburn's providers that read
// one build them.

import (
	"fmt"
	"net/netip"
	"slices"
)

// ProxmoxVELinks returns a Proxmox VE machine's links from its version 1
// network-config (others give none), as Afterburn's proxmoxve networks()
// and to_interface (coreos/afterburn src/providers/proxmoxve/cloudconfig.rs):
// each physical entry by name and MAC (priority 20), each static subnet's
// address with a default route through its gateway, DHCPv4 or DHCPv6 as
// the last DHCP subnet says, and the one nameserver entry's addresses on
// every link. More than one nameserver entry, a static subnet without an
// address and a netmask given as a prefix length are errors, as there.
func ProxmoxVELinks(c Config) (Network, error) {
	var n Network
	if c.Format != V1 {
		return n, nil
	}
	if len(c.DNS) > 1 {
		return n, fmt.Errorf("more than one nameserver entry: %w", ErrInvalid)
	}
	for i, iface := range c.Interfaces {
		l := Link{Name: iface.Name, MAC: iface.MAC, Priority: 20}
		for _, s := range iface.Subnets {
			switch s.Kind {
			case Static:
				if !s.Address.IsValid() {
					return Network{}, fmt.Errorf("interface %d: a static subnet without an address: %w", i, ErrInvalid)
				}
				if s.PrefixNetmask {
					return Network{}, fmt.Errorf("interface %d: a netmask that is not an address: %w", i, ErrInvalid)
				}
				l.Addresses = append(l.Addresses, s.Address)
				if s.Gateway.IsValid() {
					l.Routes = append(l.Routes, defaultRoute(s.Gateway))
				}
			case DHCP4:
				l.DHCP = DHCPv4
			case DHCP6:
				l.DHCP = DHCPv6
			}
		}
		if len(c.DNS) == 1 {
			l.Nameservers = c.DNS[0].Nameservers
		}
		n.Links = append(n.Links, l)
	}
	return n, nil
}

// KubeVirtLinks returns a KubeVirt machine's links from any of the three
// descriptions, as Afterburn's kubevirt networks() builds them
// (coreos/afterburn src/providers/kubevirt/nocloud.rs and configdrive.rs,
// to_interfaces): each interface in Read's order by name and MAC
// (priority 20), its static addresses, its routes, DHCP as its subnets
// say in order (a dhcp4 after both is IPv4 only again in version 1, as
// there), and its own nameservers then the global ones: version 1's first
// nameserver entry appended as it is, version 2's and OpenStack's dns
// services each once.
func KubeVirtLinks(c Config) Network {
	var global []netip.Addr
	if len(c.DNS) > 0 {
		if c.Format == V1 {
			global = c.DNS[0].Nameservers
		} else {
			for _, d := range c.DNS {
				global = append(global, d.Nameservers...)
			}
		}
	}
	var n Network
	for _, iface := range c.Interfaces {
		l := Link{Name: iface.Name, MAC: iface.MAC, Priority: 20, Addresses: iface.Addresses(), Routes: iface.Routes}
		var v4, v6 bool
		for _, s := range iface.Subnets {
			switch {
			case s.Kind == DHCP4 && c.Format == V1:
				// Afterburn's: V6 becomes both, anything else V4.
				v4, v6 = true, v6 && !v4
			case s.Kind == DHCP4:
				v4 = true
			case s.Kind == DHCP6 && c.Format == V1:
				v4, v6 = v4 && !v6, true
			case s.Kind == DHCP6:
				v6 = true
			}
		}
		switch {
		case v4 && v6:
			l.DHCP = DHCPBoth
		case v4:
			l.DHCP = DHCPv4
		case v6:
			l.DHCP = DHCPv6
		}
		l.Nameservers = append([]netip.Addr(nil), iface.DNS.Nameservers...)
		for _, ns := range global {
			if c.Format == V1 || !slices.Contains(l.Nameservers, ns) {
				l.Nameservers = append(l.Nameservers, ns)
			}
		}
		n.Links = append(n.Links, l)
	}
	return n
}
