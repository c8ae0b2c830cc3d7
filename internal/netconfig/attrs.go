package netconfig

// The agent's address attributes, as Afterburn picks them per platform.

import "net/netip"

// KubeVirtAddresses returns KubeVirt's KUBEVIRT_IPV4 and _IPV6: the first
// address of each family of the first interface that has addresses
// (coreos/afterburn src/providers/kubevirt/cloudconfig.rs, attributes);
// not valid where there is none.
func KubeVirtAddresses(c Config) (v4, v6 netip.Addr) {
	for _, iface := range c.Interfaces {
		as := iface.Addresses()
		if len(as) == 0 {
			continue
		}
		for _, a := range as {
			p := &v6
			if a.Addr().Is4() {
				p = &v4
			}
			if !p.IsValid() {
				*p = a.Addr()
			}
		}
		break
	}
	return v4, v6
}

// ProxmoxVEAddresses returns Proxmox VE's PROXMOXVE_IPV4 and _IPV6: the
// last address of each family of the first interface
// (coreos/afterburn src/providers/proxmoxve/cloudconfig.rs, attributes).
func ProxmoxVEAddresses(c Config) (v4, v6 netip.Addr) {
	if len(c.Interfaces) == 0 {
		return v4, v6
	}
	for _, a := range c.Interfaces[0].Addresses() {
		if a.Addr().Is4() {
			v4 = a.Addr()
		} else {
			v6 = a.Addr()
		}
	}
	return v4, v6
}
