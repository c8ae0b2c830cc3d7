package netconfig

// dracut's initramfs network arguments (dracut.cmdline(7): ip=,
// rd.route=, nameserver=), as Afterburn's rd_network_kargs builds them
// per platform.

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ipText writes an address as dracut wants it: IPv6 in brackets.
func ipText(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	return "[" + a.String() + "]"
}

// maskText writes a prefix's mask as dracut's ip= wants it: the dotted
// netmask for IPv4, the prefix length for IPv6.
func maskText(p netip.Prefix) string {
	if p.Addr().Is4() {
		return net.IP(net.CIDRMask(p.Bits(), 32)).String()
	}
	return strconv.Itoa(p.Bits())
}

// KubeVirtKargs returns KubeVirt's initramfs network arguments, as
// Afterburn's rd_network_kargs for kubevirt (coreos/afterburn
// src/providers/kubevirt/cloudconfig.rs): for each interface, named by
// its name or else its MAC address (left out with neither), each static
// address as ip=ADDR:::NETMASK::ID:static (IPv6 [ADDR] and the prefix
// length), ip=ID:dhcp, ID:dhcp6 or ID:dhcp,dhcp6, and each default route
// as rd.route=0.0.0.0/0:GW or rd.route=[::/0]:[GW]; then every nameserver
// once (the interfaces', then the first global entry's), nameserver=NS
// each.
func KubeVirtKargs(c Config) string {
	var global DNS
	if len(c.DNS) > 0 {
		global.Nameservers = c.DNS[0].Nameservers
	}
	var kargs []string
	var all DNS
	for i := range c.Interfaces {
		iface := &c.Interfaces[i]
		id := iface.ID()
		if id == "" {
			continue
		}
		for _, a := range iface.Addresses() {
			kargs = append(kargs, "ip="+ipText(a.Addr())+":::"+maskText(a)+"::"+id+":static")
		}
		switch v4, v6 := iface.DHCP(); {
		case v4 && v6:
			kargs = append(kargs, "ip="+id+":dhcp,dhcp6")
		case v4:
			kargs = append(kargs, "ip="+id+":dhcp")
		case v6:
			kargs = append(kargs, "ip="+id+":dhcp6")
		}
		for _, r := range iface.Routes {
			if r.Default() {
				kargs = append(kargs, "rd.route="+bracketed(r.To.String(), r.To.Addr())+":"+ipText(r.Via))
			}
		}
		all.add(DNS{Nameservers: iface.DNS.Nameservers})
		all.add(global)
	}
	for _, ns := range all.Nameservers {
		kargs = append(kargs, "nameserver="+ipText(ns))
	}
	return strings.Join(kargs, " ")
}

// bracketed writes s in brackets when a is an IPv6 address.
func bracketed(s string, a netip.Addr) string {
	if a.Is4() {
		return s
	}
	return "[" + s + "]"
}

// ProxmoxVEKargs returns Proxmox VE's initramfs network arguments, as
// Afterburn's rd_network_kargs for proxmoxve (coreos/afterburn
// src/providers/proxmoxve/cloudconfig.rs), from a version 1 description
// (the only one Proxmox VE writes; others give none): for each interface
// in order, each static address as ip=ADDR::GATEWAY:NETMASK:::off (IPv6:
// [ADDR]::[GATEWAY]:PREFIX; the gateway that of the first static subnet
// whose gateway is of the family, none when none is), ip=dhcp or
// ip=dhcp6 (the interface's last DHCP subnet), and the nameserver entry's
// addresses as nameserver=A,B after each interface. What Afterburn's
// proxmoxve cannot turn into interfaces is an error: more than one
// nameserver entry, a static subnet without an address, a netmask given
// as a prefix length.
func ProxmoxVEKargs(c Config) (string, error) {
	if c.Format != V1 {
		return "", nil
	}
	if len(c.DNS) > 1 {
		return "", fmt.Errorf("more than one nameserver entry: %w", ErrInvalid)
	}
	var nameservers []string
	if len(c.DNS) == 1 {
		for _, ns := range c.DNS[0].Nameservers {
			nameservers = append(nameservers, ns.String())
		}
	}
	var kargs []string
	for i, iface := range c.Interfaces {
		var gw4, gw6 netip.Addr
		dhcp := ""
		for _, s := range iface.Subnets {
			switch s.Kind {
			case Static:
				if !s.Address.IsValid() {
					return "", fmt.Errorf("interface %d: a static subnet without an address: %w", i, ErrInvalid)
				}
				if s.PrefixNetmask {
					// Afterburn's netmask is an address, never a prefix length.
					return "", fmt.Errorf("interface %d: a netmask that is not an address: %w", i, ErrInvalid)
				}
				if g := s.Gateway; g.Is4() && !gw4.IsValid() {
					gw4 = g
				} else if g.Is6() && !gw6.IsValid() {
					gw6 = g
				}
			case DHCP4:
				dhcp = "ip=dhcp"
			case DHCP6:
				dhcp = "ip=dhcp6"
			}
		}
		for _, a := range iface.Addresses() {
			gw := gw6
			if a.Addr().Is4() {
				gw = gw4
			}
			gwText := ""
			if gw.IsValid() {
				gwText = ipText(gw)
			}
			kargs = append(kargs, "ip="+ipText(a.Addr())+"::"+gwText+":"+maskText(a)+":::off")
		}
		if dhcp != "" {
			kargs = append(kargs, dhcp)
		}
		if len(nameservers) > 0 {
			kargs = append(kargs, "nameserver="+strings.Join(nameservers, ","))
		}
	}
	return strings.Join(kargs, " "), nil
}
