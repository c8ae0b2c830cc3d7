package netconfig

// Links from a network description, as Afterburn's providers that read
// one build them.

import "fmt"

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
