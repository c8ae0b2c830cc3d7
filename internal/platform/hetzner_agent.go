package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/flintboot/flint/internal/netconfig"
	"github.com/flintboot/flint/internal/resource"
)

// hetznerMetadata reads the hostname and the keys, one path each;
// public-keys is a JSON list (coreos/afterburn src/providers/hetzner/mod.rs).
func hetznerMetadata(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint(resource.LinkLocalMetadata) + "/hetzner/v1/metadata"
	var m Metadata
	var err error
	if m.Hostname, err = host.getText(ctx, base+"/hostname", nil); err != nil {
		return m, err
	}
	keys, err := host.getText(ctx, base+"/public-keys", nil)
	if err != nil {
		return m, err
	}
	if keys != "" {
		if err := json.Unmarshal([]byte(keys), &m.Keys); err != nil {
			return m, fmt.Errorf("hetzner: %s/public-keys: %w: %w", base, ErrProtocol, err)
		}
	}
	return m, nil
}

// hetznerAttributes reads the attributes as Afterburn does
// (coreos/afterburn src/providers/hetzner/mod.rs, From<Attributes>): the
// whole metadata document (YAML) for the plain values and, from its
// network-config (cloud-init's version 1), the address of the first
// IPv6 subnet of the first physical interface as HETZNER_PUBLIC_IPV6;
// the private networks' addresses from private-networks (a YAML list).
func hetznerAttributes(ctx context.Context, host *Host) ([]Attribute, error) {
	base := host.endpoint(resource.LinkLocalMetadata) + "/hetzner/v1/metadata"
	data, err := host.get(ctx, resource.Request{URL: base})
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) ([]Attribute, error) {
		return nil, fmt.Errorf("hetzner: %s: %w: %w", what, ErrProtocol, err)
	}
	doc, err := readYAMLKeys(data, "availability-zone", "hostname", "instance-id", "public-ipv4", "region")
	if err != nil {
		return fail(base, err)
	}
	var m Metadata
	for _, f := range []field{
		{"HETZNER_AVAILABILITY_ZONE", "availability-zone"},
		{"HETZNER_HOSTNAME", "hostname"},
		{"HETZNER_INSTANCE_ID", "instance-id"},
		{"HETZNER_PUBLIC_IPV4", "public-ipv4"},
	} {
		v, err := yamlString(doc, f.path)
		if err != nil {
			return fail(base, err)
		}
		m.add(f.attr, v)
	}
	if block := yamlBlock(data, "network-config"); block != nil {
		tree, err := readYAMLTree(block)
		if err != nil {
			return fail(base+" network-config", err)
		}
		m.add("HETZNER_PUBLIC_IPV6", hetznerPublicIPv6(tree))
	}
	region, err := yamlString(doc, "region")
	if err != nil {
		return fail(base, err)
	}
	m.add("HETZNER_REGION", region)

	data, err = host.get(ctx, resource.Request{URL: base + "/private-networks"})
	if err != nil {
		return nil, err
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return fail(base+"/private-networks", err)
	}
	// Numbered by the network's place in the list, as Afterburn's
	// enumerate() numbers them: a network without an address leaves a gap.
	nets, _ := tree.([]any)
	for i, n := range nets {
		if ip := jsonGet(n, "ip"); len(ip) > 0 {
			m.add("HETZNER_PRIVATE_IPV4_"+strconv.Itoa(i), ip[0])
		}
	}
	return m.Attrs, nil
}

// hetznerPublicIPv6 returns the address, without its prefix length, of
// the first subnet marked ipv6 of the first physical entry, "" when there
// is none or it is not an IPv6 address.
func hetznerPublicIPv6(tree any) string {
	entries, _ := jsonPath(tree, "config").([]any)
	for _, e := range entries {
		if netconfig.Text(jsonPath(e, "type")) != "physical" {
			continue
		}
		subnets, _ := jsonPath(e, "subnets").([]any)
		for _, sub := range subnets {
			if netconfig.Text(jsonPath(sub, "ipv6")) != "true" {
				continue
			}
			// Afterburn parses it as an IpNetwork, which takes an address
			// without a prefix length too, and prints the address back
			// in canonical form.
			s := netconfig.Text(jsonPath(sub, "address"))
			a, err := netip.ParseAddr(s)
			if p, perr := netip.ParsePrefix(s); perr == nil {
				a, err = p.Addr(), nil
			}
			if err != nil || !a.Is6() {
				return ""
			}
			return a.String()
		}
		return ""
	}
	return ""
}

// hetznerNetwork builds the server's links from its network-config (a
// YAML document much like cloud-init's version 1) as Afterburn does
// (coreos/afterburn src/providers/hetzner/mod.rs, networks and
// NetworkConfigEntry::to_interface): each physical entry by name and MAC
// (priority 20); a static or static6 subnet adds its address (with its
// netmask, or ADDR/LEN), its dns_nameservers and a default route through
// its gateway; a dhcp, dhcp4 or dhcp6 subnet asks for DHCPv6 when it says
// ipv6: true, else DHCPv4 (the type does not decide), merged.
func hetznerNetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	u := host.endpoint(resource.LinkLocalMetadata) + "/hetzner/v1/metadata/network-config"
	data, err := host.get(ctx, resource.Request{URL: u})
	if err != nil {
		return netconfig.Network{}, err
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return netconfig.Network{}, fmt.Errorf("hetzner: %s: %w: %w", u, ErrProtocol, err)
	}
	var n netconfig.Network
	entries, _ := jsonPath(tree, "config").([]any)
	for i, e := range entries {
		if netconfig.Text(jsonPath(e, "type")) != "physical" {
			continue
		}
		what := fmt.Sprintf("hetzner: network-config entry %d", i)
		l := netconfig.Link{Name: netconfig.Text(jsonPath(e, "name")), Priority: 20}
		if s := netconfig.Text(jsonPath(e, "mac_address")); s != "" {
			if l.MAC, err = netMAC(s, what+" mac_address"); err != nil {
				return n, err
			}
		}
		subnets, _ := jsonPath(e, "subnets").([]any)
		for j, sub := range subnets {
			w := fmt.Sprintf("%s subnet %d", what, j)
			switch netconfig.Text(jsonPath(sub, "type")) {
			case "static", "static6":
				addr := netconfig.Text(jsonPath(sub, "address"))
				if addr == "" {
					return n, fmt.Errorf("%s: a static subnet without an address: %w", w, ErrProtocol)
				}
				nss, _ := jsonPath(sub, "dns_nameservers").([]any)
				for k, ns := range nss {
					a, err := netAddr(netconfig.Text(ns), fmt.Sprintf("%s dns_nameservers %d", w, k))
					if err != nil {
						return n, err
					}
					l.Nameservers = append(l.Nameservers, a)
				}
				var p netip.Prefix
				if mask := netconfig.Text(jsonPath(sub, "netmask")); mask != "" {
					p, err = netPrefix(addr, mask, w)
				} else {
					p, err = netCIDR(addr, w+" address")
				}
				if err != nil {
					return n, err
				}
				l.Addresses = append(l.Addresses, p)
				gws := netconfig.Text(jsonPath(sub, "gateway"))
				if gws == "" {
					host.Logger.Warn("hetzner: a static subnet without a gateway: its address is not routed", "entry", i, "subnet", j)
					continue
				}
				gw, err := netAddr(gws, w+" gateway")
				if err != nil {
					return n, err
				}
				l.Routes = append(l.Routes, netconfig.Route{To: netip.PrefixFrom(unspecified(gw.Is4()), 0), Via: gw})
			case "dhcp", "dhcp4", "dhcp6":
				mode := netconfig.DHCPv4
				if netconfig.Text(jsonPath(sub, "ipv6")) == "true" {
					mode = netconfig.DHCPv6
				}
				l.DHCP = l.DHCP.Merge(mode)
			default:
				host.Logger.Warn("hetzner: a subnet type Afterburn ignores, ignored", "entry", i, "subnet", j)
			}
		}
		n.Links = append(n.Links, l)
	}
	return n, nil
}
