package platform

// What several platforms' network readers share: addresses, masks and
// MAC addresses as Afterburn's providers parse them (ipnetwork, pnet's
// MacAddr), each failure an ErrProtocol naming the field.

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// netAddr parses an address; what names the field in the error.
func netAddr(s, what string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%s: not an IP address: %w", what, ErrProtocol)
	}
	return a, nil
}

// maskBits is ipnetwork's ip_mask_to_prefix: the prefix length of a
// contiguous netmask of either family.
func maskBits(s, what string) (int, error) {
	m, err := netAddr(s, what)
	if err != nil {
		return 0, err
	}
	bits, size := net.IPMask(m.AsSlice()).Size()
	if size == 0 {
		return 0, fmt.Errorf("%s: not a contiguous netmask: %w", what, ErrProtocol)
	}
	return bits, nil
}

// netPrefix is an address with a netmask (of its family) as a prefix,
// host bits kept.
func netPrefix(addr, mask, what string) (netip.Prefix, error) {
	a, err := netAddr(addr, what+" address")
	if err != nil {
		return netip.Prefix{}, err
	}
	bits, err := maskBits(mask, what+" netmask")
	if err != nil {
		return netip.Prefix{}, err
	}
	if bits > a.BitLen() {
		return netip.Prefix{}, fmt.Errorf("%s: a netmask of the other family: %w", what, ErrProtocol)
	}
	return netip.PrefixFrom(a, bits), nil
}

// netCIDR parses "ADDR/LEN" or a bare address (the whole length), as
// ipnetwork's IpNetwork::from_str does.
func netCIDR(s, what string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netAddr(s, what)
		return netip.PrefixFrom(a, a.BitLen()), err
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%s: not an address with a prefix length: %w", what, ErrProtocol)
	}
	return p, nil
}

// netMAC parses a MAC address of six octets, written in lower case with
// colons as pnet's MacAddr prints it.
func netMAC(s, what string) (string, error) {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 || strings.Count(s, ":") != 5 {
		return "", fmt.Errorf("%s: not a MAC address: %w", what, ErrProtocol)
	}
	return hw.String(), nil
}

// networkdDNS returns the resolvers systemd-networkd learnt (the DNS=
// line of /run/systemd/netif/state), as Afterburn's packet provider reads
// them; none is an error.
func (host *Host) networkdDNS() ([]netip.Addr, error) {
	const state = "/run/systemd/netif/state"
	data, err := os.ReadFile(host.Env.path(state))
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", host.ID, state, err)
	}
	var out []netip.Addr
	for _, line := range strings.Split(string(data), "\n") {
		v, ok := strings.CutPrefix(line, "DNS=")
		if !ok {
			continue
		}
		for _, s := range strings.Split(v, " ") {
			a, err := netAddr(s, host.ID+": "+state+" DNS")
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		break
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no DNS servers in %s: %w", host.ID, state, ErrProtocol)
	}
	return out, nil
}
