package netconfig

// dracut's initramfs network arguments (dracut.cmdline(7): ip=,
// rd.route=, nameserver=), as Afterburn's rd_network_kargs builds them
// per platform.

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// bracket writes an IPv6 address in brackets, as dracut wants it.
func bracket(s string, a netip.Addr) string {
	if a.Is4() {
		return s
	}
	return "[" + s + "]"
}

// netmask4 is the dotted IPv4 netmask of a prefix length.
func netmask4(bits int) string {
	return net.IP(net.CIDRMask(bits, 32)).String()
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
	var global []netip.Addr
	if len(c.DNS) > 0 {
		global = c.DNS[0].Nameservers
	}
	var kargs []string
	var nameservers []netip.Addr
	for _, iface := range c.Interfaces {
		id := iface.ID()
		if id == "" {
			continue
		}
		for _, a := range iface.Addresses() {
			if a.Addr().Is4() {
				kargs = append(kargs, fmt.Sprintf("ip=%s:::%s::%s:static", a.Addr(), netmask4(a.Bits()), id))
			} else {
				kargs = append(kargs, fmt.Sprintf("ip=[%s]:::%d::%s:static", a.Addr(), a.Bits(), id))
			}
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
			if !r.Default() {
				continue
			}
			dst := r.To.Addr()
			kargs = append(kargs, fmt.Sprintf("rd.route=%s:%s", bracket(dst.String()+"/0", dst), bracket(r.Via.String(), r.Via)))
		}
		for _, ns := range slices.Concat(iface.DNS.Nameservers, global) {
			if !slices.Contains(nameservers, ns) {
				nameservers = append(nameservers, ns)
			}
		}
	}
	for _, ns := range nameservers {
		kargs = append(kargs, "nameserver="+bracket(ns.String(), ns))
	}
	return strings.Join(kargs, " ")
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
			if a.Addr().Is4() {
				gw := ""
				if gw4.IsValid() {
					gw = gw4.String()
				}
				kargs = append(kargs, fmt.Sprintf("ip=%s::%s:%s:::off", a.Addr(), gw, netmask4(a.Bits())))
			} else {
				gw := ""
				if gw6.IsValid() {
					gw = "[" + gw6.String() + "]"
				}
				kargs = append(kargs, "ip=["+a.Addr().String()+"]::"+gw+":"+strconv.Itoa(a.Bits())+":::off")
			}
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
