package netconfig

// NetworkManager connection profiles (nm-settings-keyfile(5)), as
// Afterburn's write_nm_profiles writes them (coreos/afterburn
// src/providers/mod.rs; src/network.rs nm_config,
// write_nm_config_common).

import (
	"slices"
	"strconv"
	"strings"
)

// nmPriority turns a networkd priority (lower first) into an
// autoconnect-priority (higher first): 999-p, 999 and above capped to 0.
func nmPriority(p int) int {
	return 999 - min(max(p, 0), 999)
}

// NMKeyfiles returns a <name>.nmconnection keyfile (mode 0600:
// NetworkManager ignores keyfiles others can read) for every bond device,
// holding the addresses of the link named as the bond; then for every
// other link and every other device, in order. A later file of the same
// name replaces an earlier one.
func NMKeyfiles(n Network) ([]File, error) {
	var bonds, others []NetDev
	for _, d := range n.NetDevs {
		if d.Kind == Bond {
			bonds = append(bonds, d)
		} else {
			others = append(others, d)
		}
	}
	isBond := func(l Link) bool {
		return l.Name != "" && slices.ContainsFunc(bonds, func(d NetDev) bool { return d.Name == l.Name })
	}
	var out []File
	add := func(name, data string) {
		out = append(out, File{Name: name + ".nmconnection", Data: []byte(data), Mode: 0o600})
	}
	for _, d := range bonds {
		var master *Link
		for i := range n.Links {
			if n.Links[i].Name == d.Name {
				master = &n.Links[i]
				break
			}
		}
		add(d.Name, nmDevice(d, master))
	}
	for _, l := range n.Links {
		if isBond(l) {
			continue
		}
		id, err := l.ID()
		if err != nil {
			return nil, err
		}
		add(id, nmLink(l, id))
	}
	for _, d := range others {
		add(d.Name, nmDevice(d, nil))
	}
	return out, nil
}

// nmLink is a physical link's profile. The interface name is written only
// without a MAC address to match: a metadata service's eth0 is often
// enp1s0 under predictable names.
func nmLink(l Link, id string) string {
	var b strings.Builder
	b.WriteString("[connection]\nid=" + id + "\ntype=ethernet\n")
	if l.MAC == "" {
		line(&b, "interface-name", l.Name)
	}
	b.WriteString("autoconnect=true\nautoconnect-priority=" + strconv.Itoa(nmPriority(l.Priority)) + "\n")
	if l.Bond != "" {
		b.WriteString("master=" + l.Bond + "\nslave-type=bond\n")
	}
	if l.MAC != "" {
		b.WriteString("\n[ethernet]\nmac-address=" + l.MAC + "\n")
	}
	nmIP(&b, l)
	return b.String()
}

// nmDevice is a virtual device's profile; a bond's holds master's
// addresses when there is such a link.
func nmDevice(d NetDev, master *Link) string {
	var b strings.Builder
	b.WriteString("[connection]\nid=" + d.Name + "\ntype=" + d.Kind.String() + "\ninterface-name=" + d.Name + "\nautoconnect=true\n")
	if d.Priority != 0 {
		b.WriteString("autoconnect-priority=" + strconv.Itoa(nmPriority(d.Priority)) + "\n")
	}
	section := func(name string) (keys [][2]string, found bool) {
		for _, s := range d.NM {
			if s.Name == name {
				return s.Keys, true
			}
		}
		return nil, false
	}
	if d.Kind == Bond {
		b.WriteString("\n[bond]\n")
		keys, _ := section("bond")
		for _, kv := range keys {
			b.WriteString(kv[0] + "=" + kv[1] + "\n")
		}
		// Set on reload only, not when the device is made (Afterburn's note).
		b.WriteString("\n[ethernet]\ncloned-mac-address=" + d.MAC + "\n")
		if master != nil {
			nmIP(&b, *master)
		}
		return b.String()
	}
	b.WriteString("\n[vlan]\n")
	keys, _ := section("vlan")
	parent := false
	for _, kv := range keys {
		parent = parent || kv[0] == "parent"
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	if !parent {
		b.WriteString("\n[ethernet]\nmac-address=" + d.MAC + "\n")
	}
	return b.String()
}

// nmIP writes [ipv4] and [ipv6]: auto with DHCP for the family, disabled
// without addresses, else manual with addressN, the first default route
// as gateway and the others as routeN=DEST,GW,0; then the family's
// nameservers as dns=A;B;.
func nmIP(b *strings.Builder, l Link) {
	for _, fam := range []struct {
		name string
		v4   bool
		dhcp DHCPMode
	}{{"ipv4", true, DHCPv4}, {"ipv6", false, DHCPv6}} {
		b.WriteString("\n[" + fam.name + "]\n")
		var addrs []string
		for _, a := range l.Addresses {
			if a.Addr().Is4() == fam.v4 {
				addrs = append(addrs, a.String())
			}
		}
		switch {
		case l.DHCP == fam.dhcp || l.DHCP == DHCPBoth:
			b.WriteString("method=auto\n")
		case len(addrs) == 0:
			b.WriteString("method=disabled\n")
		default:
			b.WriteString("method=manual\n")
			for i, a := range addrs {
				b.WriteString("address" + strconv.Itoa(i+1) + "=" + a + "\n")
			}
			// The first default route is the gateway, written before
			// the other routes.
			var routes []Route
			gateway := false
			for _, r := range l.Routes {
				switch {
				case r.To.Addr().Is4() != fam.v4:
				case !r.Default():
					routes = append(routes, r)
				case !gateway:
					b.WriteString("gateway=" + r.Via.String() + "\n")
					gateway = true
				}
			}
			for i, r := range routes {
				b.WriteString("route" + strconv.Itoa(i+1) + "=" + r.To.String() + "," + r.Via.String() + ",0\n")
			}
		}
		var dns []string
		for _, ns := range l.Nameservers {
			if ns.Is4() == fam.v4 {
				dns = append(dns, ns.String())
			}
		}
		if len(dns) > 0 {
			b.WriteString("dns=" + strings.Join(dns, ";") + ";\n")
		}
	}
}
