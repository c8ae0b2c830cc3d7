package platform

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/flintboot/flint/internal/netconfig"

	"github.com/flintboot/flint/internal/resource"
)

// digitalOceanMetadata reads /metadata/v1.json. The addresses are
// Afterburn's (coreos/afterburn src/providers/digitalocean/mod.rs
// parse_attrs): it decodes them as IpAddr and prints them back, so they are
// written in canonical form (RFC 5952: the service's
// 2604:A880:0800:0000:1000:0000:0000:0000 is 2604:a880:800:0:1000::), and
// numbered by the interface's index in its list, not by how many addresses
// came before.
func digitalOceanMetadata(ctx context.Context, host *Host) (Metadata, error) {
	doc, err := host.getJSONDoc(ctx, resource.Request{URL: host.endpoint("http://169.254.169.254") + "/metadata/v1.json"})
	if err != nil {
		return Metadata{}, err
	}
	m := jsonSpec{
		Hostname: "hostname",
		Keys:     []string{"public_keys.*"},
		Attrs:    []field{{"DIGITALOCEAN_HOSTNAME", "hostname"}},
	}.read(doc)
	for _, a := range []struct{ name, list, key string }{
		{"DIGITALOCEAN_IPV4_ANCHOR_", "public", "anchor_ipv4"},
		{"DIGITALOCEAN_IPV4_PUBLIC_", "public", "ipv4"},
		{"DIGITALOCEAN_IPV6_PUBLIC_", "public", "ipv6"},
		{"DIGITALOCEAN_IPV4_PRIVATE_", "private", "ipv4"},
		{"DIGITALOCEAN_IPV6_PRIVATE_", "private", "ipv6"},
	} {
		ifaces, _ := jsonPath(jsonPath(doc, "interfaces"), a.list).([]any)
		for i, iface := range ifaces {
			if v := jsonGet(iface, a.key+".ip_address"); len(v) > 0 {
				m.add(a.name+strconv.Itoa(i), canonicalIP(v[0]))
			}
		}
	}
	if v := jsonGet(doc, "region"); len(v) > 0 {
		m.add("DIGITALOCEAN_REGION", v[0])
	}
	return m, nil
}

// digitalOceanNetwork builds the droplet's links as Afterburn does
// (coreos/afterburn src/providers/digitalocean/mod.rs, parse_network):
// the public interfaces, then the private ones, one link per MAC address
// in each list (priority 10, dns.nameservers, no DHCP), each address
// (ipv4 with its netmask, ipv6 with its cidr, anchor_ipv4) with a route
// to its own network through its gateway, and on a public interface a
// default route per family. An interface listed twice adds its later
// addresses before the earlier ones.
func digitalOceanNetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	doc, err := host.getJSONDoc(ctx, resource.Request{URL: host.endpoint("http://169.254.169.254") + "/metadata/v1.json"})
	if err != nil {
		return netconfig.Network{}, err
	}
	var dns []netip.Addr
	for i, s := range jsonGet(doc, "dns.nameservers.*") {
		a, err := netAddr(s, fmt.Sprintf("digitalocean: dns nameserver %d", i))
		if err != nil {
			return netconfig.Network{}, err
		}
		dns = append(dns, a)
	}
	var n netconfig.Network
	for _, list := range []string{"public", "private"} {
		ifaces, _ := jsonPath(jsonPath(doc, "interfaces"), list).([]any)
		var links []netconfig.Link
		for i, iface := range ifaces {
			what := fmt.Sprintf("digitalocean: %s interface %d", list, i)
			mac, err := netMAC(netconfig.Text(jsonPath(iface, "mac")), what+" mac")
			if err != nil {
				return n, err
			}
			addrs, routes, err := digitalOceanAddresses(iface, what)
			if err != nil {
				return n, err
			}
			j := slices.IndexFunc(links, func(l netconfig.Link) bool { return l.MAC == mac })
			if j < 0 {
				j = len(links)
				links = append(links, netconfig.Link{})
			}
			links[j] = netconfig.Link{
				MAC: mac, Priority: 10, Nameservers: dns,
				Addresses: append(addrs, links[j].Addresses...),
				Routes:    append(routes, links[j].Routes...),
			}
		}
		n.Links = append(n.Links, links...)
	}
	return n, nil
}

// digitalOceanAddresses reads one interface's addresses and routes.
func digitalOceanAddresses(iface any, what string) ([]netip.Prefix, []netconfig.Route, error) {
	public := netconfig.Text(jsonPath(iface, "type")) == "public"
	var addrs []netip.Prefix
	var routes []netconfig.Route
	for _, f := range []struct {
		key   string
		v4    bool
		deflt bool
	}{{"ipv4", true, public}, {"ipv6", false, public}, {"anchor_ipv4", true, false}} {
		v := jsonPath(iface, f.key)
		if v == nil {
			continue
		}
		w := what + " " + f.key
		addr := netconfig.Text(jsonPath(v, "ip_address"))
		var p netip.Prefix
		var err error
		if f.v4 {
			mask := netconfig.Text(jsonPath(v, "netmask"))
			if mask == "" {
				return nil, nil, fmt.Errorf("%s: no netmask: %w", w, ErrProtocol)
			}
			p, err = netPrefix(addr, mask, w)
		} else {
			cidr := netconfig.Text(jsonPath(v, "cidr"))
			if cidr == "" {
				return nil, nil, fmt.Errorf("%s: no cidr: %w", w, ErrProtocol)
			}
			p, err = netCIDR(addr+"/"+cidr, w)
		}
		if err != nil {
			return nil, nil, err
		}
		if p.Addr().Is4() != f.v4 {
			return nil, nil, fmt.Errorf("%s: an address of the other family: %w", w, ErrProtocol)
		}
		gw, err := netAddr(netconfig.Text(jsonPath(v, "gateway")), w+" gateway")
		if err != nil {
			return nil, nil, err
		}
		addrs = append(addrs, p)
		routes = append(routes, netconfig.Route{To: p, Via: gw})
		if f.deflt {
			routes = append(routes, netconfig.Route{To: netip.PrefixFrom(unspecified(f.v4), 0), Via: gw})
		}
	}
	return addrs, routes, nil
}

// unspecified is 0.0.0.0 or ::.
func unspecified(v4 bool) netip.Addr {
	if v4 {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}
