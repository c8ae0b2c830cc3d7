package netconfig

// The readers take the document as platform's YAML and JSON reader
// decodes it: mappings as map[string]any, lists as []any, leaves as
// strings ("" for an empty value), json.Number or bool. Each format reads
// only its own keys; what a key holds is checked where it is read.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Read reads a network description: OpenStack's network_data.json when
// it has links or networks, else cloud-init's network config, version 1
// or 2 as its version says (by shape when it says none: a config list is
// version 1), possibly under a top-level network key, as cloud-init
// allows.
func Read(tree any) (Config, error) {
	root, err := mapping(tree, "the document")
	if err != nil {
		return Config{}, err
	}
	if inner, ok := root["network"]; ok {
		if root, err = mapping(inner, "network"); err != nil {
			return Config{}, err
		}
	}
	_, links := root["links"]
	_, networks := root["networks"]
	switch version := text(root["version"]); {
	case links || networks:
		return readOpenStack(root)
	case version == "1", version == "" && root["config"] != nil:
		return readV1(root)
	case version == "2", version == "":
		return readV2(root)
	}
	return Config{}, fmt.Errorf("network config version %s: %w", text(root["version"]), ErrInvalid)
}

// Text returns a leaf of a decoded JSON or YAML document as text, as the
// readers here take it (text): the platforms read their own documents'
// leaves (Hetzner's and UpCloud's metadata) with it too.
func Text(v any) string { return text(v) }

// text returns a leaf's text: YAML leaves are strings, JSON ones may be
// numbers or booleans; anything else is "". It and mapping and list are
// called at every key the readers take: kept out of line, they cost the
// binary once rather than at each call (a few KB in all).
//
//go:noinline
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// mapping returns v as a mapping; nil (an absent key) and "" (an empty
// value) are an empty one, anything else an error naming what.
//
//go:noinline
func mapping(v any, what string) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case nil:
		return nil, nil
	case string:
		if x == "" {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%s: not a mapping: %w", what, ErrInvalid)
}

// list returns v as a list; absent or empty is an empty one.
//
//go:noinline
func list(v any, what string) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case nil:
		return nil, nil
	case string:
		if x == "" {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%s: not a list: %w", what, ErrInvalid)
}

// names returns a list of names (search domains): a list of leaves, or
// one leaf.
func names(v any, what string) ([]string, error) {
	if s := text(v); s != "" {
		return []string{s}, nil
	}
	l, err := list(v, what)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range l {
		if s := text(x); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// addr parses an address; an IPv4-mapped IPv6 address is the IPv4
// address, as net.IP treats it.
func addr(s, what string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%s: not an IP address: %w", what, ErrInvalid)
	}
	return a.Unmap(), nil
}

// addrs returns a list of addresses; listWhat names the list in errors,
// itemWhat each address.
func addrs(v any, listWhat, itemWhat string) ([]netip.Addr, error) {
	l, err := list(v, listWhat)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, len(l))
	for i, x := range l {
		if out[i], err = addr(text(x), itemWhat); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// prefix parses "ADDR/PREFIX", or ADDR alone (a host: /32, /128); the
// address keeps its host bits.
func prefix(s, what string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	a, _, ok := strings.Cut(s, "/")
	ip, err := addr(a, what)
	if err != nil {
		return netip.Prefix{}, err
	}
	if !ok {
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	// Parsed whole, so that a mapped address keeps its own prefix length.
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s: not an IP address with a prefix length: %w", what, ErrInvalid)
	}
	n := p.Bits()
	if p.Addr().Is4In6() {
		if n -= 96; n < 0 {
			return netip.Prefix{}, fmt.Errorf("%s: not an IP address with a prefix length: %w", what, ErrInvalid)
		}
	}
	return netip.PrefixFrom(ip, n), nil
}

// masked parses an address with a netmask that is either an address
// (255.255.255.0, ffff:ffff:ffff:ffff::) of the address's family and
// contiguous, or a prefix length; byLength says it was the latter.
func masked(a, mask, what string) (p netip.Prefix, byLength bool, err error) {
	ip, err := addr(a, what)
	if err != nil {
		return netip.Prefix{}, false, err
	}
	mask = strings.TrimSpace(mask)
	if m, err := netip.ParseAddr(mask); err == nil {
		if m.Unmap().Is4() != ip.Is4() {
			return netip.Prefix{}, false, fmt.Errorf("%s netmask: not of the address's family: %w", what, ErrInvalid)
		}
		ones, bits := net.IPMask(m.Unmap().AsSlice()).Size()
		if bits == 0 {
			return netip.Prefix{}, false, fmt.Errorf("%s netmask: not contiguous: %w", what, ErrInvalid)
		}
		return netip.PrefixFrom(ip, ones), false, nil
	}
	n, err := strconv.Atoi(mask)
	if err != nil || n < 0 || n > ip.BitLen() {
		return netip.Prefix{}, false, fmt.Errorf("%s netmask: neither an address nor a prefix length: %w", what, ErrInvalid)
	}
	return netip.PrefixFrom(ip, n), true, nil
}

// address reads a static address given as ADDR[/PREFIX], or as ADDR
// with a netmask when mask is not "".
func address(a, mask, what string) (Subnet, error) {
	s := Subnet{Kind: Static}
	var err error
	if mask != "" {
		s.Address, s.PrefixNetmask, err = masked(a, mask, what)
	} else {
		s.Address, err = prefix(a, what)
	}
	return s, err
}

// mac normalises a MAC address as Afterburn prints it (lower case,
// colons); "" stays "".
func mac(s, what string) (string, error) {
	if s == "" {
		return "", nil
	}
	hw, err := net.ParseMAC(s)
	if err != nil {
		return "", fmt.Errorf("%s MAC address: not one: %w", what, ErrInvalid)
	}
	return hw.String(), nil
}

// mtu reads an MTU, 0 when absent.
func mtu(v any, what string) (int, error) {
	s := text(v)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("%s mtu: not a number of bytes: %w", what, ErrInvalid)
	}
	return n, nil
}

// defaultRoute is the default route of gw's family.
func defaultRoute(gw netip.Addr) Route {
	zero := netip.IPv6Unspecified()
	if gw.Is4() {
		zero = netip.IPv4Unspecified()
	}
	return Route{To: netip.PrefixFrom(zero, 0), Via: gw}
}

// routes reads the list of routes v of what (an interface, subnet or
// network), each by parse, which reads one route's keys; a route is named
// "what route N" in errors.
func routes(v any, what string, parse func(route map[string]any, what string) (Route, error)) ([]Route, error) {
	l, err := list(v, what+" routes")
	if err != nil {
		return nil, err
	}
	out := make([]Route, 0, len(l))
	for k, r := range l {
		what := fmt.Sprintf("%s route %d", what, k)
		route, err := mapping(r, what)
		if err != nil {
			return nil, err
		}
		rt, err := parse(route, what)
		if err != nil {
			return nil, err
		}
		out = append(out, rt)
	}
	return out, nil
}

// add adds the addresses and names of o not already in d.
func (d *DNS) add(o DNS) {
	for _, a := range o.Nameservers {
		if !slices.Contains(d.Nameservers, a) {
			d.Nameservers = append(d.Nameservers, a)
		}
	}
	for _, s := range o.Search {
		if !slices.Contains(d.Search, s) {
			d.Search = append(d.Search, s)
		}
	}
}

// sortNamed puts named interfaces first, by name; the others keep their
// order.
func sortNamed(ifaces []Interface) {
	// sort.SliceStable rather than a generic sort: an instance for a
	// struct this large costs the binary a few KB.
	sort.SliceStable(ifaces, func(i, j int) bool {
		a, b := ifaces[i].Name, ifaces[j].Name
		return a != "" && (b == "" || a < b)
	})
}
