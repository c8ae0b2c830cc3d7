package platform

// Proxmox VE and KubeVirt describe the VM's network on its drive: a NoCloud
// drive's network-config (cloud-init network config version 1 or 2, YAML or
// JSON), a config-2 drive's openstack/latest/network_data.json (OpenStack's
// links and networks). Afterburn turns the static addresses of one interface
// into <PLATFORM>_IPV4 and <PLATFORM>_IPV6; flint reads the same addresses
// with readYAMLTree and picks them as Afterburn does.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
)

// errNetConfig means a network description flint cannot read: a value
// of the wrong kind, an address that is not one.
var errNetConfig = errors.New("network configuration flint does not read")

// netIface is one interface of a network description and its static
// addresses (without prefix length), in the file's order.
type netIface struct {
	name  string
	addrs []string
}

// netString returns a leaf's text: YAML leaves are strings, JSON ones
// may be numbers or booleans.
func netString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	}
	return ""
}

// netMap returns v as a mapping; nil (an absent key, an empty value) is an
// empty one, anything else than a mapping an error naming what.
func netMap(v any, what string) (map[string]any, error) {
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
	return nil, fmt.Errorf("%s: not a mapping: %w", what, errNetConfig)
}

// netList returns v as a list; absent or empty is an empty one.
func netList(v any, what string) ([]any, error) {
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
	return nil, fmt.Errorf("%s: not a list: %w", what, errNetConfig)
}

// netAddr returns the address of "address" or "address/prefix".
func netAddr(v any, what string) (string, error) {
	s, _, _ := strings.Cut(netString(v), "/")
	ip := net.ParseIP(s)
	if ip == nil {
		return "", fmt.Errorf("%s: not an IP address: %w", what, errNetConfig)
	}
	return ip.String(), nil
}

// netConfigRoot is a network description's top-level object: the
// document's, or its network key's, as cloud-init allows.
func netConfigRoot(tree any) (map[string]any, error) {
	root, err := netMap(tree, "the document")
	if err != nil {
		return nil, err
	}
	if inner, ok := root["network"]; ok {
		return netMap(inner, "network")
	}
	return root, nil
}

// networkInterfaces reads a network description: OpenStack's (links and
// networks) or cloud-init's version 1 (config) or 2 (ethernets), the
// latter possibly under a top-level network key, as cloud-init allows.
func networkInterfaces(tree any) ([]netIface, error) {
	root, err := netConfigRoot(tree)
	if err != nil {
		return nil, err
	}
	_, links := root["links"]
	_, networks := root["networks"]
	switch version := netString(root["version"]); {
	case links || networks:
		return openStackInterfaces(root)
	case version == "1", version == "" && root["config"] != nil:
		return netConfigV1(root)
	case version == "2", version == "":
		return netConfigV2(root)
	}
	return nil, fmt.Errorf("network config version %s: %w", netString(root["version"]), errNetConfig)
}

// netConfigV1 reads the physical entries of config and the addresses of
// their static subnets (static, static6).
func netConfigV1(root map[string]any) ([]netIface, error) {
	entries, err := netList(root["config"], "config")
	if err != nil {
		return nil, err
	}
	var out []netIface
	for i, e := range entries {
		what := fmt.Sprintf("config entry %d", i)
		entry, err := netMap(e, what)
		if err != nil {
			return nil, err
		}
		if netString(entry["type"]) != "physical" {
			continue
		}
		subnets, err := netList(entry["subnets"], what+" subnets")
		if err != nil {
			return nil, err
		}
		iface := netIface{name: netString(entry["name"])}
		for j, s := range subnets {
			what := fmt.Sprintf("%s subnet %d", what, j)
			subnet, err := netMap(s, what)
			if err != nil {
				return nil, err
			}
			if !strings.Contains(netString(subnet["type"]), "static") || subnet["address"] == nil {
				continue
			}
			ip, err := netAddr(subnet["address"], what+" address")
			if err != nil {
				return nil, err
			}
			iface.addrs = append(iface.addrs, ip)
		}
		out = append(out, iface)
	}
	return out, nil
}

// netConfigV2 reads ethernets: Afterburn names an interface after its key
// unless it is matched (by MAC address) and the key does not start with
// "eth"; named interfaces come first, by name, then the others (by key here:
// Afterburn leaves their order to a hash map).
func netConfigV2(root map[string]any) ([]netIface, error) {
	eths, err := netMap(root["ethernets"], "ethernets")
	if err != nil {
		return nil, err
	}
	// Sort keys: "0" and the name for named interfaces, "1" and the key
	// for the others (sorting strings adds no code to the binary).
	byKey := map[string]netIface{}
	for key, v := range eths {
		what := "ethernet " + key
		eth, err := netMap(v, what)
		if err != nil {
			return nil, err
		}
		addrs, err := netList(eth["addresses"], what+" addresses")
		if err != nil {
			return nil, err
		}
		iface := netIface{name: key}
		for j, a := range addrs {
			if _, ok := a.(map[string]any); ok {
				return nil, fmt.Errorf("%s address %d: a mapping, want \"address/prefix\": %w", what, j, errNetConfig)
			}
			ip, err := netAddr(a, fmt.Sprintf("%s address %d", what, j))
			if err != nil {
				return nil, err
			}
			iface.addrs = append(iface.addrs, ip)
		}
		sk := "0" + key
		if eth["match"] != nil && !strings.HasPrefix(key, "eth") {
			sk = "1" + key
		}
		byKey[sk] = iface
	}
	return ifacesByKey(byKey), nil
}

// ifacesByKey returns the interfaces of byKey in the order of their keys.
func ifacesByKey(byKey map[string]netIface) []netIface {
	keys := sortedKeys(byKey)
	out := make([]netIface, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// openStackInterfaces reads network_data.json: each link that networks
// refer to is an interface with the ip_address of its ipv4 and ipv6
// networks; named links first, by name, then the others in the order
// networks first refer to them.
func openStackInterfaces(root map[string]any) ([]netIface, error) {
	links, err := netList(root["links"], "links")
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for i, l := range links {
		link, err := netMap(l, fmt.Sprintf("link %d", i))
		if err != nil {
			return nil, err
		}
		names[netString(link["id"])] = netString(link["name"])
	}
	networks, err := netList(root["networks"], "networks")
	if err != nil {
		return nil, err
	}
	var order []string
	byLink := map[string]*netIface{}
	for i, n := range networks {
		what := fmt.Sprintf("network %d", i)
		nw, err := netMap(n, what)
		if err != nil {
			return nil, err
		}
		id := netString(nw["link"])
		name, ok := names[id]
		if !ok {
			continue
		}
		iface := byLink[id]
		if iface == nil {
			iface = &netIface{name: name}
			byLink[id] = iface
			order = append(order, id)
		}
		if t := netString(nw["type"]); (t == "ipv4" || t == "ipv6") && nw["ip_address"] != nil {
			ip, err := netAddr(nw["ip_address"], what+" ip_address")
			if err != nil {
				return nil, err
			}
			iface.addrs = append(iface.addrs, ip)
		}
	}
	// Sort keys as in netConfigV2: named links by name, the others in
	// the order of their first network.
	bySortKey := map[string]netIface{}
	for i, id := range order {
		key := fmt.Sprintf("1%08d", i)
		if n := byLink[id].name; n != "" {
			key = fmt.Sprintf("0%s\x00%08d", n, i)
		}
		bySortKey[key] = *byLink[id]
	}
	return ifacesByKey(bySortKey), nil
}

// addIPAttrs adds <prefix>IPV4 and <prefix>IPV6 from ifaces as Afterburn
// picks them: on Proxmox VE the last address of each family of the first
// interface; on KubeVirt the first of each family of the first interface
// that has addresses.
func (m *Metadata) addIPAttrs(ifaces []netIface, prefix string, kubeVirt bool) {
	var v4, v6 string
	for _, iface := range ifaces {
		if kubeVirt && len(iface.addrs) == 0 {
			continue
		}
		for _, a := range iface.addrs {
			p := &v6
			if net.ParseIP(a).To4() != nil {
				p = &v4
			}
			if *p == "" || !kubeVirt {
				*p = a
			}
		}
		break
	}
	m.add(prefix+"IPV4", v4)
	m.add(prefix+"IPV6", v6)
}
