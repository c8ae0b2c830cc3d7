package netconfig

// systemd-networkd units (systemd.network(5), systemd.netdev(5)), as
// Afterburn's write_network_units writes them (coreos/afterburn
// src/providers/mod.rs; src/network.rs sd_unit_name, sd_config,
// netdev_unit_name, sd_netdev_config).

import (
	"fmt"
	"strings"
)

// File is one file a projection writes: its name in the output
// directory, its contents and its mode.
type File struct {
	Name string
	Data []byte
	Mode uint32
}

// NetworkdUnits returns the .network unit of every link, then the .netdev
// unit of every device, in order; a later file of the same name replaces
// an earlier one, as Afterburn's File::create does.
func NetworkdUnits(n Network) ([]File, error) {
	var out []File
	for _, l := range n.Links {
		id, err := l.ID()
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: fmt.Sprintf("%02d-%s.network", l.Priority, id), Data: []byte(networkUnit(l)), Mode: 0o644})
	}
	for _, d := range n.NetDevs {
		p := d.Priority
		if p == 0 {
			p = 10
		}
		out = append(out, File{Name: fmt.Sprintf("%02d-%s.netdev", p, d.Name), Data: []byte(netdevUnit(d)), Mode: 0o644})
	}
	return out, nil
}

// networkUnit is a link's unit: [Match], [Network], [Link] when it has
// something, an [Address] per address and a [Route] per route.
func networkUnit(l Link) string {
	var b strings.Builder
	b.WriteString("[Match]\n")
	line(&b, "Name", l.Name)
	line(&b, "MACAddress", l.MAC)
	line(&b, "Path", l.Path)
	b.WriteString("\n[Network]\n")
	line(&b, "DHCP", map[DHCPMode]string{DHCPBoth: "yes", DHCPv4: "ipv4", DHCPv6: "ipv6"}[l.DHCP])
	for _, ns := range l.Nameservers {
		line(&b, "DNS", ns.String())
	}
	line(&b, "Bond", l.Bond)
	if l.Unmanaged || l.RequiredForOnline != "" {
		b.WriteString("\n[Link]\n")
	}
	if l.Unmanaged {
		b.WriteString("Unmanaged=yes\n")
	}
	line(&b, "RequiredForOnline", l.RequiredForOnline)
	for _, a := range l.Addresses {
		b.WriteString("\n[Address]\nAddress=" + a.String() + "\n")
	}
	for _, r := range l.Routes {
		b.WriteString("\n[Route]\nDestination=" + r.To.String() + "\nGateway=" + r.Via.String() + "\n")
	}
	return b.String()
}

// netdevUnit is a device's unit: [NetDev] and its extra sections.
func netdevUnit(d NetDev) string {
	var b strings.Builder
	b.WriteString("[NetDev]\nName=" + d.Name + "\nKind=" + d.Kind.String() + "\nMACAddress=" + d.MAC + "\n")
	for _, s := range d.Networkd {
		b.WriteString("\n[" + s.Name + "]\n")
		for _, kv := range s.Keys {
			b.WriteString(kv[0] + "=" + kv[1] + "\n")
		}
	}
	return b.String()
}

// line writes key=value when value is not empty.
func line(b *strings.Builder, key, value string) {
	if value != "" {
		b.WriteString(key + "=" + value + "\n")
	}
}
