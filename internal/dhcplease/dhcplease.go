// Package dhcplease reads the DHCP leases a machine's network service
// keeps, for the two values flint's platforms take from DHCP: the
// server's address (CloudStack's metadata service is the virtual router
// that answered DHCP) and option 245 (Azure's WireServer address): from
// the lease files, and from NetworkManager over D-Bus (nmdbus.go), whose
// internal client keeps only ADDRESS= in its lease files (NetworkManager
// src/core/dhcp/nm-dhcp-nettools.c, lease_save), as Afterburn asks it
// (coreos/afterburn src/util/dhcp.rs).
//
// The formats: systemd-networkd's lease files (one per interface, named
// by interface index, KEY=VALUE lines: SERVER_ADDRESS=10.1.1.1,
// OPTION_245=A83F8110), NetworkManager's (the same format) and dhclient's (lease { … } blocks: option
// dhcp-server-identifier 10.1.1.1; option unknown-245 a8:3f:81:10;), where
// the last block of a file is the newest lease.
//
// Family: config sources, platforms and agent (internal/README.md).
package dhcplease

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Lease is what flint reads from one lease file. A value the file does
// not hold, or holds malformed, is the zero netip.Addr.
type Lease struct {
	// File is the lease file's path as given to Read.
	File string
	// Server is the DHCP server identifier (option 54).
	Server netip.Addr
	// Option245 is Azure's WireServer address.
	Option245 netip.Addr
}

// globs are the lease files, in the order Read returns them.
func globs() []string {
	return []string{
		"/run/systemd/netif/leases/*",
		"/var/lib/NetworkManager/*.lease",
		"/var/lib/dhclient/*.lease*",
		"/var/lib/dhcp/*.lease*",
	}
}

// Read returns the lease of every lease file found, networkd's first (by
// interface index, as Afterburn and WALinuxAgent walk interfaces), then
// NetworkManager's, then dhclient's, each by name. path maps an absolute
// path to where it is read (a test's root); nil reads the paths as they are.
// Unreadable files are left out.
func Read(path func(string) string) []Lease {
	if path == nil {
		path = func(p string) string { return p }
	}
	var leases []Lease
	for _, g := range globs() {
		files, _ := filepath.Glob(path(g))
		slices.SortFunc(files, func(a, b string) int { return compareIfindex(filepath.Base(a), filepath.Base(b)) })
		for _, f := range files {
			if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			l := Parse(data)
			l.File = f
			leases = append(leases, l)
		}
	}
	return leases
}

// Parse reads one lease file in any of the three formats. A later value
// replaces an earlier one, so dhclient's newest lease, its last block,
// wins.
func Parse(data []byte) Lease {
	var l Lease
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "SERVER_ADDRESS="); ok {
			l.Server = parseAddr(v)
		} else if v, ok := strings.CutPrefix(line, "OPTION_245="); ok {
			l.Option245 = addrFromBytes(hex.DecodeString(v))
		} else if v, ok := strings.CutPrefix(line, "option dhcp-server-identifier "); ok {
			l.Server = parseAddr(strings.TrimSuffix(v, ";"))
		} else if v, ok := strings.CutPrefix(line, "option unknown-245 "); ok {
			l.Option245 = addrFromBytes(colonHex(strings.TrimSuffix(v, ";")))
		}
	}
	return l
}

// parseAddr returns s as an address without a zone, or the zero Addr.
func parseAddr(s string) netip.Addr {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}
	}
	return a
}

// addrFromBytes returns a 4-byte option value as an IPv4 address, or the
// zero Addr.
func addrFromBytes(raw []byte, err error) netip.Addr {
	if err != nil || len(raw) != 4 {
		return netip.Addr{}
	}
	return netip.AddrFrom4([4]byte(raw))
}

// colonHex decodes dhclient's a8:3f:81:10 (leading zeros may be left out).
func colonHex(s string) ([]byte, error) {
	var out []byte
	for _, p := range strings.Split(strings.TrimSpace(s), ":") {
		b, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(b))
	}
	return out, nil
}

// compareIfindex orders file names numerically (networkd names them by
// interface index), anything else after them by name.
func compareIfindex(a, b string) int {
	ia, errA := strconv.Atoi(a)
	ib, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return ia - ib
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}
