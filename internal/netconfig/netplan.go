package netconfig

// A netplan document (netplan(5), version 2), as Afterburn's Hetzner
// provider builds one from its links and serde_yaml prints it
// (coreos/afterburn src/providers/hetzner/mod.rs, netplan_config).

import (
	"strconv"
	"strings"
)

// NetplanStyle is which of Afterburn's providers' netplan documents to
// write: they differ.
type NetplanStyle int

const (
	// NoNetplan: the platform has none.
	NoNetplan NetplanStyle = iota
	// NetplanHetzner has version: 2 and the routes (coreos/afterburn
	// src/providers/hetzner/mod.rs).
	NetplanHetzner
	// NetplanProxmoxVE has neither (coreos/afterburn
	// src/providers/proxmoxve/cloudconfig.rs).
	NetplanProxmoxVE
)

// Netplan returns the network document of the named links (one without a
// name is left out, as Afterburn's is): version: 2 in Hetzner's style,
// then per link dhcp4 and dhcp6, addresses, routes (to, via; Hetzner's
// style) and nameservers.addresses, each only when there is one, in that
// order; sequences unindented under their key and an empty mapping as
// {}, as serde_yaml writes them.
func Netplan(n Network, style NetplanStyle) []byte {
	var b strings.Builder
	b.WriteString("network:\n")
	if style == NetplanHetzner {
		b.WriteString("  version: 2\n")
	}
	var eth strings.Builder
	for _, l := range n.Links {
		if l.Name == "" {
			continue
		}
		var body strings.Builder
		if l.DHCP == DHCPv4 || l.DHCP == DHCPBoth {
			body.WriteString("      dhcp4: true\n")
		}
		if l.DHCP == DHCPv6 || l.DHCP == DHCPBoth {
			body.WriteString("      dhcp6: true\n")
		}
		if len(l.Addresses) > 0 {
			body.WriteString("      addresses:\n")
			for _, a := range l.Addresses {
				body.WriteString("      - " + yamlScalar(a.String()) + "\n")
			}
		}
		if len(l.Routes) > 0 && style == NetplanHetzner {
			body.WriteString("      routes:\n")
			for _, r := range l.Routes {
				body.WriteString("      - to: " + yamlScalar(r.To.String()) + "\n        via: " + yamlScalar(r.Via.String()) + "\n")
			}
		}
		if len(l.Nameservers) > 0 {
			body.WriteString("      nameservers:\n        addresses:\n")
			for _, ns := range l.Nameservers {
				body.WriteString("        - " + yamlScalar(ns.String()) + "\n")
			}
		}
		if body.Len() == 0 {
			eth.WriteString("    " + yamlScalar(l.Name) + ": {}\n")
			continue
		}
		eth.WriteString("    " + yamlScalar(l.Name) + ":\n" + body.String())
	}
	if eth.Len() == 0 {
		b.WriteString("  ethernets: {}\n")
	} else {
		b.WriteString("  ethernets:\n" + eth.String())
	}
	return []byte(b.String())
}

// plainSafe reports a string a YAML emitter leaves plain: letters,
// digits and _.:/ first, those and @%+- after, nothing that needs quoting.
func plainSafe(s string) bool {
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.:/", c)
		if !ok && (i == 0 || !strings.ContainsRune("@%+-", c)) {
			return false
		}
	}
	return s != ""
}

// yamlScalar writes s plain when it reads back as the same string, else in
// single quotes (a name such as "true", "1" or "null", or with blanks or
// indicators).
func yamlScalar(s string) string {
	_, intErr := strconv.ParseInt(s, 0, 64)
	_, floatErr := strconv.ParseFloat(s, 64)
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", "-.inf", ".nan":
		return "'" + s + "'"
	}
	if plainSafe(s) && intErr != nil && floatErr != nil && !strings.HasSuffix(s, ":") && !strings.Contains(s, ": ") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
