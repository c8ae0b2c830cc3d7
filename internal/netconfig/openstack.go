package netconfig

// OpenStack's network_data.json (a config-2 drive's
// openstack/latest/network_data.json): links (the interfaces), networks
// (each an address or a DHCP setting on a link) and services (dns), read
// as Afterburn reads KubeVirt's (coreos/afterburn
// src/providers/kubevirt/configdrive.rs).

import "fmt"

// readOpenStack reads one interface per link that networks refer to: the
// link's name, ethernet_mac_address and mtu; its networks in order (ipv4
// and ipv6 with ip_address and netmask, ipv4_dhcp, ipv6_dhcp), their
// routes and dns_nameservers; the dns services as the global
// nameservers.
func readOpenStack(root map[string]any) (Config, error) {
	links, err := list(root["links"], "links")
	if err != nil {
		return Config{}, err
	}
	networks, err := list(root["networks"], "networks")
	if err != nil {
		return Config{}, err
	}
	services, err := list(root["services"], "services")
	if err != nil {
		return Config{}, err
	}
	c := Config{Format: OpenStack}
	var dns DNS
	for i, s := range services {
		what := fmt.Sprintf("service %d", i)
		svc, err := mapping(s, what)
		if err != nil {
			return Config{}, err
		}
		if text(svc["type"]) != "dns" {
			continue
		}
		a, err := addr(text(svc["address"]), what+" address")
		if err != nil {
			return Config{}, err
		}
		dns.Nameservers = append(dns.Nameservers, a)
	}
	if len(dns.Nameservers) > 0 {
		c.DNS = append(c.DNS, dns)
	}
	// One interface per link, in link order; those no network refers to
	// are dropped at the end.
	ifaces := make([]Interface, len(links))
	raw := make([]map[string]any, len(links))
	used := make([]bool, len(links))
	byID := map[string]int{}
	for i, l := range links {
		if raw[i], err = mapping(l, fmt.Sprintf("link %d", i)); err != nil {
			return Config{}, err
		}
		id := text(raw[i]["id"])
		ifaces[i].Name, ifaces[i].Key = text(raw[i]["name"]), id
		if _, dup := byID[id]; !dup {
			byID[id] = i
		}
	}
	for j, n := range networks {
		what := fmt.Sprintf("network %d", j)
		nw, err := mapping(n, what)
		if err != nil {
			return Config{}, err
		}
		i, ok := byID[text(nw["link"])]
		if !ok {
			continue
		}
		used[i] = true
		if err := readOpenStackNetwork(&ifaces[i], nw, what); err != nil {
			return Config{}, err
		}
	}
	for i := range ifaces {
		if !used[i] {
			continue
		}
		what := fmt.Sprintf("link %d", i)
		if ifaces[i].MAC, err = mac(text(raw[i]["ethernet_mac_address"]), what); err != nil {
			return Config{}, err
		}
		if ifaces[i].MTU, err = mtu(raw[i]["mtu"], what); err != nil {
			return Config{}, err
		}
		c.Interfaces = append(c.Interfaces, ifaces[i])
	}
	sortNamed(c.Interfaces)
	return c, nil
}

// readOpenStackNetwork adds one network to its link's interface.
func readOpenStackNetwork(iface *Interface, nw map[string]any, what string) error {
	switch text(nw["type"]) {
	case "ipv4", "ipv6":
		if a := text(nw["ip_address"]); a != "" {
			s, err := address(a, text(nw["netmask"]), what+" ip_address")
			if err != nil {
				return err
			}
			iface.Subnets = append(iface.Subnets, s)
		}
	case "ipv4_dhcp":
		iface.Subnets = append(iface.Subnets, Subnet{Kind: DHCP4})
	case "ipv6_dhcp":
		iface.Subnets = append(iface.Subnets, Subnet{Kind: DHCP6})
	}
	ns, err := addrs(nw["dns_nameservers"], what+" dns_nameservers", what+" nameserver")
	if err != nil {
		return err
	}
	iface.DNS.add(DNS{Nameservers: ns})
	rs, err := routes(nw["routes"], what, func(route map[string]any, what string) (Route, error) {
		to, _, err := masked(text(route["network"]), text(route["netmask"]), what+" network")
		if err != nil {
			return Route{}, err
		}
		gw, err := addr(text(route["gateway"]), what+" gateway")
		return Route{To: to, Via: gw}, err
	})
	if err != nil {
		return err
	}
	iface.Routes = append(iface.Routes, rs...)
	return nil
}
