package platform

// Equinix Metal (platform id packet) serves a JSON instance document at
// /metadata. It holds phone_home_url, which the first boot POSTs to (an
// empty JSON request) to mark provisioning done, and the events endpoint
// beside it (<phone_home_url without /phone-home>/events) shows a
// {"state","message"} event on the instance's timeline in the console, where
// Ignition posts its stage results (coreos/ignition
// internal/providers/packet/packet.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/netconfig"
	"github.com/flintboot/flint/internal/resource"
	"slices"
)

type packetDoc struct {
	Hostname     string   `json:"hostname"`
	Plan         string   `json:"plan"`
	Facility     string   `json:"facility"`
	Metro        string   `json:"metro"`
	SSHKeys      []string `json:"ssh_keys"`
	PhoneHomeURL string   `json:"phone_home_url"`
	Network      struct {
		Addresses []struct {
			Address string `json:"address"`
			Netmask string `json:"netmask"`
			Gateway string `json:"gateway"`
			Public  bool   `json:"public"`
			Family  int    `json:"address_family"`
		} `json:"addresses"`
		Interfaces []struct {
			MAC  string  `json:"mac"`
			Bond *string `json:"bond"`
		} `json:"interfaces"`
		Bonding struct {
			Mode int `json:"mode"`
		} `json:"bonding"`
	} `json:"network"`
}

func (host *Host) packetDoc(ctx context.Context) (packetDoc, error) {
	var doc packetDoc
	err := host.getJSON(ctx, resource.Request{
		URL:    host.endpoint("https://metadata.packet.net") + "/metadata",
		Header: http.Header{"Accept": {"*/*"}},
	}, &doc)
	return doc, err
}

func packetMetadata(ctx context.Context, host *Host) (Metadata, error) {
	doc, err := host.packetDoc(ctx)
	if err != nil {
		return Metadata{}, err
	}
	m := Metadata{Hostname: doc.Hostname, Keys: doc.SSHKeys}
	m.add("PACKET_HOSTNAME", doc.Hostname)
	m.add("PACKET_PHONE_HOME_URL", doc.PhoneHomeURL)
	m.add("PACKET_PLAN", doc.Plan)
	// Afterburn reads neither (coreos/afterburn src/providers/packet/mod.rs
	// get_attrs): flint's own.
	m.add("FLINT_PACKET_FACILITY", doc.Facility)
	m.add("FLINT_PACKET_METRO", doc.Metro)
	count := map[string]int{}
	for _, ad := range doc.Network.Addresses {
		kind := "IPV4_PRIVATE"
		switch {
		case ad.Family == 6 && ad.Public:
			kind = "IPV6_PUBLIC"
		case ad.Family == 6:
			kind = "IPV6_PRIVATE"
		case ad.Public:
			kind = "IPV4_PUBLIC"
		}
		n := strconv.Itoa(count[kind])
		count[kind]++
		// Addresses as Afterburn prints them, parsed (2604:1380::0 is
		// 2604:1380::).
		m.add("PACKET_"+kind+"_"+n, canonicalIP(ad.Address))
		m.add("PACKET_"+kind+"_GATEWAY_"+n, canonicalIP(ad.Gateway))
	}
	return m, nil
}

// packetPhoneHome returns the instance's phone-home URL.
func (host *Host) packetPhoneHome(ctx context.Context) (string, error) {
	doc, err := host.packetDoc(ctx)
	if err != nil {
		return "", err
	}
	if doc.PhoneHomeURL == "" {
		return "", fmt.Errorf("packet: the metadata has no phone_home_url: %w", ErrProtocol)
	}
	return doc.PhoneHomeURL, nil
}

func packetCheckIn(ctx context.Context, host *Host) error {
	u, err := host.packetPhoneHome(ctx)
	if err != nil {
		return err
	}
	_, err = host.get(ctx, resource.Request{
		URL:    u,
		Method: http.MethodPost,
		Header: http.Header{"Content-Type": {"application/json"}},
	})
	return err
}

func packetReportFailure(ctx context.Context, host *Host, reason string) error {
	u, err := host.packetPhoneHome(ctx)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"state": "failed", "message": "flint: provisioning failed: " + reason})
	if err != nil {
		return err
	}
	_, err = host.get(ctx, resource.Request{
		URL:    strings.TrimSuffix(strings.TrimSuffix(u, "/"), "/phone-home") + "/events",
		Method: http.MethodPost,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   body,
	})
	return err
}

// canonicalIP returns s as netip formats it, s itself when it is not an
// address.
func canonicalIP(s string) string {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.String()
	}
	return s
}

// packetBondModes are the kernel's bonding mode names by number
// (coreos/afterburn src/network.rs, BONDING_MODES).
var packetBondModes = [...]string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}

// packetNetwork builds the machine's links as Afterburn's packet provider
// does (coreos/afterburn src/providers/packet/mod.rs, parse_network):
// every NIC by MAC (priority 10), a slave of its bond that need not be
// online, or unmanaged without one; each bond once (priority 5, the
// resolvers networkd got from DHCP, online when degraded-carrier) with a
// bond device carrying the first slave's MAC; every address on the first
// bond, routed by default (a private IPv4 one to 10.0.0.0/8); and a
// fallback leaving every other PCI NIC unmanaged. Without a bond the NICs
// alone, addresses unassigned.
func packetNetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	doc, err := host.packetDoc(ctx)
	if err != nil {
		return netconfig.Network{}, err
	}
	var n netconfig.Network
	dns, err := host.networkdDNS()
	if err != nil {
		return n, err
	}
	var bonds []netconfig.Link
	var bondMACs []string
	for i, nic := range doc.Network.Interfaces {
		mac, err := netMAC(nic.MAC, fmt.Sprintf("packet: interface %d mac", i))
		if err != nil {
			return n, err
		}
		l := netconfig.Link{MAC: mac, Priority: 10, Unmanaged: nic.Bond == nil}
		if nic.Bond != nil {
			// The bond's state is what matters; a slave may be down.
			l.Bond, l.RequiredForOnline = *nic.Bond, "no"
			if !slices.ContainsFunc(bonds, func(b netconfig.Link) bool { return b.Name == *nic.Bond }) {
				bonds = append(bonds, netconfig.Link{Name: *nic.Bond, Priority: 5, Nameservers: dns, RequiredForOnline: "degraded-carrier"})
				bondMACs = append(bondMACs, mac)
			}
		}
		n.Links = append(n.Links, l)
	}
	if len(bonds) == 0 {
		host.Logger.Warn("packet: no bond interfaces: the addresses are left unassigned")
		return n, nil
	}
	for i, ad := range doc.Network.Addresses {
		p, err := netPrefix(ad.Address, ad.Netmask, fmt.Sprintf("packet: address %d", i))
		if err != nil {
			return n, err
		}
		gw, err := netAddr(ad.Gateway, fmt.Sprintf("packet: address %d gateway", i))
		if err != nil {
			return n, err
		}
		to := netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		switch {
		case p.Addr().Is4() && ad.Public:
			to = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		case p.Addr().Is4():
			to = netip.MustParsePrefix("10.0.0.0/8")
		}
		bonds[0].Addresses = append(bonds[0].Addresses, p)
		bonds[0].Routes = append(bonds[0].Routes, netconfig.Route{To: to, Via: gw})
	}
	mode := doc.Network.Bonding.Mode
	if mode < 0 || mode >= len(packetBondModes) {
		return n, fmt.Errorf("packet: bonding mode %d: no such mode: %w", mode, ErrProtocol)
	}
	sd := [][2]string{{"TransmitHashPolicy", "layer3+4"}, {"MIIMonitorSec", ".1"}, {"UpDelaySec", ".2"}, {"DownDelaySec", ".2"}, {"Mode", packetBondModes[mode]}}
	nm := [][2]string{{"xmit_hash_policy", "layer3+4"}, {"miimon", "100"}, {"updelay", "200"}, {"downdelay", "200"}, {"mode", packetBondModes[mode]}}
	if mode == 4 { // 802.3ad
		sd = append(sd, [2]string{"LACPTransmitRate", "fast"})
		nm = append(nm, [2]string{"lacp_rate", "fast"})
	}
	for i, b := range bonds {
		n.NetDevs = append(n.NetDevs, netconfig.NetDev{
			Name: b.Name, Kind: netconfig.Bond, MAC: bondMACs[i], Priority: 5,
			Networkd: []netconfig.Section{{Name: "Bond", Keys: sd}},
			NM:       []netconfig.Section{{Name: "bond", Keys: nm}},
		})
	}
	n.Links = append(n.Links, bonds...)
	// Without it systemd-networkd-wait-online waits for NICs nobody
	// configures (Afterburn's note on systemd 246).
	n.Links = append(n.Links, netconfig.Link{Path: "pci-*", Unmanaged: true, Priority: 80})
	return n, nil
}
