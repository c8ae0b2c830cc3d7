package netconfig

// cloud-init's network config version 1 (cloud-init
// doc/rtd/reference/network-config-format-v1.rst): a config list of
// entries; flint reads the physical ones and the nameserver ones, as
// Afterburn does (coreos/afterburn src/providers/kubevirt/nocloud.rs,
// src/providers/proxmoxve/cloudconfig.rs).

import (
	"fmt"
	"net/netip"
	"strings"
)

// readV1 reads the physical entries (name, mac_address, mtu, subnets) and
// every nameserver entry (address, search).
func readV1(root map[string]any) (Config, error) {
	entries, err := list(root["config"], "config")
	if err != nil {
		return Config{}, err
	}
	c := Config{Format: V1}
	for i, e := range entries {
		what := fmt.Sprintf("config entry %d", i)
		entry, err := mapping(e, what)
		if err != nil {
			return Config{}, err
		}
		switch text(entry["type"]) {
		case "nameserver":
			var d DNS
			if d.Nameservers, err = addrs(entry["address"], what+" address", what+" nameserver"); err != nil {
				return Config{}, err
			}
			if d.Search, err = names(entry["search"], what+" search"); err != nil {
				return Config{}, err
			}
			c.DNS = append(c.DNS, d)
		case "physical":
			c.Interfaces = append(c.Interfaces, Interface{})
			if err := readV1Physical(&c.Interfaces[len(c.Interfaces)-1], entry, what); err != nil {
				return Config{}, err
			}
		}
	}
	return c, nil
}

// readV1Physical reads one physical entry into iface: its subnets in order (static
// addresses, a netmask as an address or a prefix length; dhcp, dhcp4,
// dhcp6; the others ignored), their dns_nameservers and dns_search, their
// routes, or a default route through the gateway of a subnet without
// routes.
func readV1Physical(iface *Interface, entry map[string]any, what string) error {
	iface.Name = text(entry["name"])
	var err error
	if iface.MAC, err = mac(text(entry["mac_address"]), what); err != nil {
		return err
	}
	if iface.MTU, err = mtu(entry["mtu"], what); err != nil {
		return err
	}
	subnets, err := list(entry["subnets"], what+" subnets")
	if err != nil {
		return err
	}
	for j, s := range subnets {
		what := fmt.Sprintf("%s subnet %d", what, j)
		subnet, err := mapping(s, what)
		if err != nil {
			return err
		}
		var dns DNS
		if dns.Nameservers, err = addrs(subnet["dns_nameservers"], what+" dns_nameservers", what+" nameserver"); err != nil {
			return err
		}
		if dns.Search, err = names(subnet["dns_search"], what+" dns_search"); err != nil {
			return err
		}
		iface.DNS.add(dns)
		var gw netip.Addr
		if g := text(subnet["gateway"]); g != "" {
			if gw, err = addr(g, what+" gateway"); err != nil {
				return err
			}
		}
		switch typ := text(subnet["type"]); {
		case strings.Contains(typ, "static"):
			sn := Subnet{Kind: Static}
			if a := text(subnet["address"]); a != "" {
				if sn, err = address(a, text(subnet["netmask"]), what+" address"); err != nil {
					return err
				}
			}
			sn.Gateway = gw
			iface.Subnets = append(iface.Subnets, sn)
		case typ == "dhcp", typ == "dhcp4":
			iface.Subnets = append(iface.Subnets, Subnet{Kind: DHCP4})
		case typ == "dhcp6":
			iface.Subnets = append(iface.Subnets, Subnet{Kind: DHCP6})
		}
		rs, err := routes(subnet["routes"], what, readV1Route)
		if err != nil {
			return err
		}
		iface.Routes = append(iface.Routes, rs...)
		if len(rs) == 0 && gw.IsValid() {
			iface.Routes = append(iface.Routes, defaultRoute(gw))
		}
	}
	return nil
}

// readV1Route reads a subnet's route: gateway, and destination
// (ADDR/PREFIX) or network with its netmask.
func readV1Route(route map[string]any, what string) (Route, error) {
	gw, err := addr(text(route["gateway"]), what+" gateway")
	if err != nil {
		return Route{}, err
	}
	var to netip.Prefix
	switch {
	case text(route["destination"]) != "":
		to, err = prefix(text(route["destination"]), what+" destination")
	case text(route["network"]) != "":
		if text(route["netmask"]) == "" {
			return Route{}, fmt.Errorf("%s: a network without a netmask: %w", what, ErrInvalid)
		}
		to, _, err = masked(text(route["network"]), text(route["netmask"]), what+" network")
	default:
		return Route{}, fmt.Errorf("%s: neither destination nor network: %w", what, ErrInvalid)
	}
	return Route{To: to, Via: gw}, err
}
