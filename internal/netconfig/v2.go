package netconfig

// cloud-init's network config version 2 (netplan's format, cloud-init
// doc/rtd/reference/network-config-format-v2.rst): flint reads ethernets
// and the top-level nameservers, as Afterburn does (coreos/afterburn
// src/providers/kubevirt/nocloud.rs, NetworkConfigV2).

import (
	"fmt"
	"slices"
	"strings"
)

// readV2 reads ethernets: an interface is named after its key unless it
// is matched and the key does not start with "eth" (then it is known by
// its match's macaddress); addresses, dhcp4 and dhcp6, mtu, routes (to,
// via) or else gateway4 and gateway6, nameservers (addresses, search).
// Named interfaces come first, by name, then the others by key (Afterburn
// leaves their order to a hash map).
func readV2(root map[string]any) (Config, error) {
	eths, err := mapping(root["ethernets"], "ethernets")
	if err != nil {
		return Config{}, err
	}
	c := Config{Format: V2}
	keys := make([]string, 0, len(eths))
	for k := range eths {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c.Interfaces = make([]Interface, len(keys))
	for i, key := range keys {
		if err := readV2Ethernet(&c.Interfaces[i], key, eths[key]); err != nil {
			return Config{}, err
		}
	}
	sortNamed(c.Interfaces)
	if root["nameservers"] != nil {
		d, err := readV2DNS(root["nameservers"], "nameservers")
		if err != nil {
			return Config{}, err
		}
		c.DNS = append(c.DNS, d)
	}
	return c, nil
}

// readV2Ethernet reads one ethernets entry into iface.
func readV2Ethernet(iface *Interface, key string, v any) error {
	what := "ethernet " + key
	eth, err := mapping(v, what)
	if err != nil {
		return err
	}
	match, err := mapping(eth["match"], what+" match")
	if err != nil {
		return err
	}
	iface.Name, iface.Key = key, key
	if eth["match"] != nil && !strings.HasPrefix(key, "eth") {
		iface.Name = ""
	}
	if iface.MAC, err = mac(text(match["macaddress"]), what); err != nil {
		return err
	}
	if iface.MTU, err = mtu(eth["mtu"], what); err != nil {
		return err
	}
	as, err := list(eth["addresses"], what+" addresses")
	if err != nil {
		return err
	}
	for j, a := range as {
		what := fmt.Sprintf("%s address %d", what, j)
		if _, ok := a.(map[string]any); ok {
			return fmt.Errorf("%s: a mapping, want \"address/prefix\": %w", what, ErrInvalid)
		}
		p, err := prefix(text(a), what)
		if err != nil {
			return err
		}
		iface.Subnets = append(iface.Subnets, Subnet{Kind: Static, Address: p})
	}
	if text(eth["dhcp4"]) == "true" {
		iface.Subnets = append(iface.Subnets, Subnet{Kind: DHCP4})
	}
	if text(eth["dhcp6"]) == "true" {
		iface.Subnets = append(iface.Subnets, Subnet{Kind: DHCP6})
	}
	if iface.Routes, err = routes(eth["routes"], what, func(route map[string]any, what string) (Route, error) {
		to, err := prefix(text(route["to"]), what+" to")
		if err != nil {
			return Route{}, err
		}
		via, err := addr(text(route["via"]), what+" via")
		return Route{To: to, Via: via}, err
	}); err != nil {
		return err
	}
	if len(iface.Routes) == 0 {
		for _, k := range []string{"gateway4", "gateway6"} {
			if g := text(eth[k]); g != "" {
				gw, err := addr(g, what+" "+k)
				if err != nil {
					return err
				}
				iface.Routes = append(iface.Routes, defaultRoute(gw))
			}
		}
	}
	if iface.DNS, err = readV2DNS(eth["nameservers"], what+" nameservers"); err != nil {
		return err
	}
	return nil
}

// readV2DNS reads a nameservers mapping: addresses and search, each
// once.
func readV2DNS(v any, what string) (DNS, error) {
	ns, err := mapping(v, what)
	if err != nil {
		return DNS{}, err
	}
	var d, out DNS
	// Each address is named "... nameserver" in errors.
	if d.Nameservers, err = addrs(ns["addresses"], what+" addresses", strings.TrimSuffix(what, "s")); err != nil {
		return DNS{}, err
	}
	if d.Search, err = names(ns["search"], what+" search"); err != nil {
		return DNS{}, err
	}
	out.add(d)
	return out, nil
}
