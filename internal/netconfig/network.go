package netconfig

// Afterburn's model of a machine's network (coreos/afterburn
// src/network.rs: Interface, VirtualNetDev), which its providers build
// from their metadata and its network outputs write: systemd-networkd
// units, NetworkManager keyfiles, netplan.

import (
	"fmt"
	"net/netip"
)

// Network is what a provider's metadata says about the machine's links:
// Afterburn's networks() and virtual_network_devices().
type Network struct {
	Links   []Link
	NetDevs []NetDev
}

// DHCPMode is a link's DHCP setting (Afterburn's Option<DhcpSetting>).
type DHCPMode int

const (
	// NoDHCP asks for no DHCP (None).
	NoDHCP DHCPMode = iota
	// DHCPBoth is DHCP for IPv4 and IPv6 (networkd DHCP=yes).
	DHCPBoth
	// DHCPv4 is DHCP for IPv4 only (DHCP=ipv4).
	DHCPv4
	// DHCPv6 is DHCPv6 only (DHCP=ipv6).
	DHCPv6
)

// Merge combines two settings as Afterburn's DhcpSetting::merge: equal
// ones stay, different ones make both; NoDHCP adds nothing.
func (d DHCPMode) Merge(o DHCPMode) DHCPMode {
	switch {
	case d == NoDHCP:
		return o
	case o == NoDHCP || d == o:
		return d
	}
	return DHCPBoth
}

// Link is one interface (Afterburn's network::Interface), matched by
// Name, MAC or Path (at least one of them).
type Link struct {
	Name string
	// MAC is lower case with colons.
	MAC string
	// Path is a networkd Path= glob ("pci-*").
	Path string
	// Priority orders the units: it is the two-digit prefix of the
	// networkd unit's name and, reversed, NetworkManager's
	// autoconnect-priority.
	Priority    int
	Nameservers []netip.Addr
	// Addresses keep their host bits, as Afterburn's IpNetwork does.
	Addresses []netip.Prefix
	DHCP      DHCPMode
	Routes    []Route
	// Bond is the bond this link is enslaved to, "" for none.
	Bond string
	// Unmanaged writes networkd's Unmanaged=yes.
	Unmanaged bool
	// RequiredForOnline is networkd's RequiredForOnline=, "" for the
	// default.
	RequiredForOnline string
}

// ID is the link's deterministic name: Name, else MAC, else Path
// (Afterburn's Interface::name).
func (l Link) ID() (string, error) {
	for _, s := range []string{l.Name, l.MAC, l.Path} {
		if s != "" {
			return s, nil
		}
	}
	return "", fmt.Errorf("a link without name, MAC address or path: %w", ErrInvalid)
}

// NetDevKind is a virtual device's kind.
type NetDevKind int

const (
	// Bond aggregates physical links.
	Bond NetDevKind = iota + 1
	// VLAN is an 802.1Q child of a physical link.
	VLAN
)

func (k NetDevKind) String() string {
	if k == VLAN {
		return "vlan"
	}
	return "bond"
}

// Section is one free-form section of a unit or keyfile, its keys in
// order.
type Section struct {
	Name string
	Keys [][2]string
}

// NetDev is one virtual device (Afterburn's VirtualNetDev).
type NetDev struct {
	Name string
	Kind NetDevKind
	MAC  string
	// Priority is the unit's prefix and NetworkManager's priority; 0
	// means none (Afterburn's None: prefix 10, no autoconnect-priority).
	// No provider gives a device priority 0.
	Priority int
	// Networkd are the .netdev unit's extra sections ([Bond]); NM the
	// keyfile's ([bond], [vlan]).
	Networkd []Section
	NM       []Section
}
