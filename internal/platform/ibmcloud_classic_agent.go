package platform

// IBM Cloud's classic infrastructure, which Afterburn names
// ibmcloud-classic (coreos/afterburn src/providers/ibmcloud_classic/mod.rs)
// and whose machines boot with ignition.platform.id=ibmcloud: a config-2
// drive (vfat) with openstack/latest/meta_data.json (name, uuid) and
// network_data.json, and no SSH keys.

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/flintboot/flint/internal/netconfig"
)

// ibmCloudClassicMetadata reads the hostname (meta_data.json's name) and
// IBMCLOUD_CLASSIC_INSTANCE_ID and _LOCAL_HOSTNAME; an empty uuid or name
// is an error, as in Afterburn's known_attributes.
func ibmCloudClassicMetadata(ctx context.Context, host *Host) (Metadata, error) {
	m, err := host.configDriveSpec(ctx, host.wait(configDriveWait), jsonSpec{
		Hostname: "name",
		Attrs:    []field{{"IBMCLOUD_CLASSIC_INSTANCE_ID", "uuid"}, {"IBMCLOUD_CLASSIC_LOCAL_HOSTNAME", "name"}},
	})
	if err != nil {
		return m, err
	}
	if len(m.Attrs) != 2 {
		return Metadata{}, fmt.Errorf("%s: config drive %s: an empty uuid or name: %w", host.ID, configDriveMetadata, ErrProtocol)
	}
	return m, nil
}

// ibmCloudClassicNetwork builds a link per network of network_data.json
// on a known link, as Afterburn's network_interfaces does: the link's
// name and MAC (priority 10), the network's address with its netmask,
// its routes (network/netmask via gateway) and every dns service's
// address.
func ibmCloudClassicNetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	_, files, err := host.configDriveFiles(ctx, host.wait(configDriveWait), jsonSpec{}, configDriveNetwork)
	if err != nil {
		return netconfig.Network{}, err
	}
	data := files[configDriveNetwork]
	if data == nil {
		return netconfig.Network{}, fmt.Errorf("%s: %s on the config drive: %w", host.ID, configDriveNetwork, ErrNoConfig)
	}
	doc, err := decodeJSONDoc(data)
	if err != nil {
		return netconfig.Network{}, fmt.Errorf("%s: config drive %s: %w: %w", host.ID, configDriveNetwork, ErrProtocol, err)
	}
	type link struct{ id, name, mac string }
	var links []link
	ls, _ := jsonPath(doc, "links").([]any)
	for i, l := range ls {
		mac, err := netMAC(netconfig.Text(jsonPath(l, "ethernet_mac_address")), fmt.Sprintf("%s: link %d ethernet_mac_address", host.ID, i))
		if err != nil {
			return netconfig.Network{}, err
		}
		links = append(links, link{netconfig.Text(jsonPath(l, "id")), netconfig.Text(jsonPath(l, "name")), mac})
	}
	var dns []netip.Addr
	svcs, _ := jsonPath(doc, "services").([]any)
	for i, s := range svcs {
		if netconfig.Text(jsonPath(s, "type")) != "dns" {
			continue
		}
		a, err := netAddr(netconfig.Text(jsonPath(s, "address")), fmt.Sprintf("%s: service %d address", host.ID, i))
		if err != nil {
			return netconfig.Network{}, err
		}
		dns = append(dns, a)
	}
	var n netconfig.Network
	nets, _ := jsonPath(doc, "networks").([]any)
	for i, nw := range nets {
		j := slices.IndexFunc(links, func(l link) bool { return l.id == netconfig.Text(jsonPath(nw, "link")) })
		if j < 0 {
			continue
		}
		what := fmt.Sprintf("%s: network %d", host.ID, i)
		p, err := netPrefix(netconfig.Text(jsonPath(nw, "ip_address")), netconfig.Text(jsonPath(nw, "netmask")), what)
		if err != nil {
			return n, err
		}
		l := netconfig.Link{Name: links[j].name, MAC: links[j].mac, Priority: 10, Nameservers: dns, Addresses: []netip.Prefix{p}}
		rs, _ := jsonPath(nw, "routes").([]any)
		for k, r := range rs {
			w := fmt.Sprintf("%s route %d", what, k)
			to, err := netPrefix(netconfig.Text(jsonPath(r, "network")), netconfig.Text(jsonPath(r, "netmask")), w)
			if err != nil {
				return n, err
			}
			gw, err := netAddr(netconfig.Text(jsonPath(r, "gateway")), w+" gateway")
			if err != nil {
				return n, err
			}
			l.Routes = append(l.Routes, netconfig.Route{To: to, Via: gw})
		}
		n.Links = append(n.Links, l)
	}
	return n, nil
}
