package netconfig

import "net/netip"

// Format is the format a description was read from.
type Format int

const (
	// V1 is cloud-init's network config version 1 (a config list).
	V1 Format = iota + 1
	// V2 is cloud-init's network config version 2 (netplan's ethernets).
	V2
	// OpenStack is OpenStack's network_data.json (links, networks,
	// services).
	OpenStack
)

// Config is one network description.
type Config struct {
	// Format is the format it was read from.
	Format Format
	// Interfaces are the physical interfaces: v1's physical entries in
	// order; v2's ethernets, named ones first by name, then the others
	// by key; OpenStack's links that networks refer to, named ones
	// first by name, then the others in link order.
	Interfaces []Interface
	// DNS are the global resolver settings: one per v1 nameserver entry
	// (in order; cloud-init allows several), v2's top-level nameservers,
	// OpenStack's dns services (all in one). Empty when there are none.
	DNS []DNS
}

// Interface is one physical interface.
type Interface struct {
	// Name is the interface's name, "" when it is known only by its MAC
	// address (a v2 ethernet matched by MAC whose key does not start
	// with "eth", as Afterburn reads it; an OpenStack link without a
	// name).
	Name string
	// Key is the v2 ethernets key or the OpenStack link id ("" in v1).
	Key string
	// MAC is the MAC address in lower case with colons, "" when none
	// is given.
	MAC string
	// MTU is the MTU in bytes, 0 when none is given.
	MTU int
	// Subnets are the static addresses and DHCP settings in the
	// description's order: v1's subnets, v2's addresses then DHCP,
	// OpenStack's networks.
	Subnets []Subnet
	// Routes are the routes: v1's subnet routes (or, for a subnet
	// without routes, a default route through its gateway), v2's routes
	// (or, without routes, default routes through gateway4 and
	// gateway6), OpenStack's network routes.
	Routes []Route
	// DNS is the interface's own resolver settings: v1's subnets'
	// dns_nameservers and dns_search (once each), v2's nameservers,
	// OpenStack's networks' dns_nameservers (once each).
	DNS DNS
}

// Kind is what a subnet configures.
type Kind int

const (
	// Static is a static address (v1 static, static6; v2 addresses;
	// OpenStack ipv4, ipv6).
	Static Kind = iota + 1
	// DHCP4 is DHCP for IPv4 (v1 dhcp, dhcp4; v2 dhcp4; OpenStack
	// ipv4_dhcp).
	DHCP4
	// DHCP6 is DHCPv6 (v1 dhcp6; v2 dhcp6; OpenStack ipv6_dhcp).
	DHCP6
)

// Subnet is one static address or DHCP setting of an interface.
type Subnet struct {
	Kind Kind
	// Address is a static subnet's address with its prefix length
	// (host bits kept); not valid (netip.Prefix{}) for DHCP, and for a
	// static subnet that gives no address.
	Address netip.Prefix
	// PrefixNetmask says the address's netmask was written as a prefix
	// length ("netmask: 24") rather than as an address or after a
	// slash; Afterburn's proxmoxve refuses that form.
	PrefixNetmask bool
	// Gateway is a v1 subnet's gateway (not valid when none): the
	// default route Routes holds for it, kept beside the address it
	// came with.
	Gateway netip.Addr
}

// Route is a route of an interface.
type Route struct {
	// To is the destination; a prefix length of 0 is a default route.
	To netip.Prefix
	// Via is the gateway.
	Via netip.Addr
}

// Default reports a default route.
func (r Route) Default() bool { return r.To.Bits() == 0 }

// DNS is a set of resolver settings.
type DNS struct {
	Nameservers []netip.Addr
	Search      []string
}

// Addresses returns the interface's static addresses in order.
func (i Interface) Addresses() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range i.Subnets {
		if s.Kind == Static && s.Address.IsValid() {
			out = append(out, s.Address)
		}
	}
	return out
}

// DHCP reports whether any subnet asks for DHCP for IPv4 and for IPv6.
func (i Interface) DHCP() (v4, v6 bool) {
	for _, s := range i.Subnets {
		v4 = v4 || s.Kind == DHCP4
		v6 = v6 || s.Kind == DHCP6
	}
	return v4, v6
}

// ID is how dracut's ip= names the interface: its name, else its MAC
// address ("" with neither).
func (i Interface) ID() string {
	if i.Name != "" {
		return i.Name
	}
	return i.MAC
}
