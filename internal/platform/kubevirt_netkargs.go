package platform

// KubeVirt's initramfs network arguments, as Afterburn's rd_network_kargs
// for kubevirt (coreos/afterburn src/providers/kubevirt/cloudconfig.rs,
// with the interfaces of src/providers/kubevirt/nocloud.rs and
// configdrive.rs): from the config-2 drive's
// openstack/latest/network_data.json, else the cidata drive's
// network-config (cloud-init network config version 1 or 2). For each
// interface, named by its name or else its MAC address (left out with
// neither): each static address as ip=ADDR:::NETMASK::ID:static (IPv6
// [ADDR] and the prefix length), ip=ID:dhcp, ID:dhcp6 or ID:dhcp,dhcp6,
// and each default route as rd.route=0.0.0.0/0:GW or rd.route=[::/0]:[GW];
// then every nameserver once, nameserver=NS each.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kvRoute is a route of an interface.
type kvRoute struct {
	dst *net.IPNet
	gw  net.IP
}

// kvIface is one interface of KubeVirt's network description, as
// Afterburn's network::Interface holds what the arguments need.
type kvIface struct {
	name, mac    string
	addrs        []*net.IPNet // the address itself, with its mask
	dhcp4, dhcp6 bool
	routes       []kvRoute
	nameservers  []net.IP
}

// addNameserver adds ns unless the interface has it.
func (i *kvIface) addNameserver(ns net.IP) {
	if !slices.ContainsFunc(i.nameservers, ns.Equal) {
		i.nameservers = append(i.nameservers, ns)
	}
}

// kvIP parses an address.
func kvIP(s, what string) (net.IP, error) {
	ip := net.ParseIP(strings.TrimSpace(s))
	if ip == nil {
		return nil, fmt.Errorf("%s %q: not an IP address: %w", what, s, errNetConfig)
	}
	if v4 := ip.To4(); v4 != nil {
		return v4, nil
	}
	return ip, nil
}

// kvNet parses "ADDR/PREFIX", or ADDR alone (a host: /32, /128).
func kvNet(s, what string) (*net.IPNet, error) {
	if ip, n, err := net.ParseCIDR(strings.TrimSpace(s)); err == nil {
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		return &net.IPNet{IP: ip, Mask: n.Mask}, nil
	}
	ip, err := kvIP(s, what)
	if err != nil {
		return nil, err
	}
	return &net.IPNet{IP: ip, Mask: net.CIDRMask(len(ip)*8, len(ip)*8)}, nil
}

// kvMasked parses an address with a netmask that is either an address
// (255.255.255.0, ffff:ffff:ffff:ffff::) or a prefix length.
func kvMasked(addr, mask, what string) (*net.IPNet, error) {
	ip, err := kvIP(addr, what)
	if err != nil {
		return nil, err
	}
	bits := len(ip) * 8
	if m := net.ParseIP(strings.TrimSpace(mask)); m != nil {
		var im net.IPMask
		if v4 := m.To4(); v4 != nil && bits == 32 {
			im = net.IPMask(v4)
		} else if m.To4() == nil && bits == 128 {
			im = net.IPMask(m)
		} else {
			return nil, fmt.Errorf("%s netmask %q: not of the address's family: %w", what, mask, errNetConfig)
		}
		if ones, b := im.Size(); b == 0 || ones < 0 {
			return nil, fmt.Errorf("%s netmask %q: not contiguous: %w", what, mask, errNetConfig)
		}
		return &net.IPNet{IP: ip, Mask: im}, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(mask))
	if err != nil || n < 0 || n > bits {
		return nil, fmt.Errorf("%s netmask %q: neither an address nor a prefix length: %w", what, mask, errNetConfig)
	}
	return &net.IPNet{IP: ip, Mask: net.CIDRMask(n, bits)}, nil
}

// kvDefault is the default route of gw's family.
func kvDefault(gw net.IP) kvRoute {
	if gw.To4() != nil {
		return kvRoute{&net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}, gw}
	}
	return kvRoute{&net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}, gw}
}

// kvMAC normalises a MAC address as Afterburn prints it (lower case,
// colons).
func kvMAC(s, what string) (string, error) {
	if s == "" {
		return "", nil
	}
	hw, err := net.ParseMAC(s)
	if err != nil {
		return "", fmt.Errorf("%s MAC address %q: %w: %w", what, s, errNetConfig, err)
	}
	return hw.String(), nil
}

// kvStrings returns a list of text leaves.
func kvStrings(v any, what string) ([]string, error) {
	l, err := netList(v, what)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = netString(x)
	}
	return out, nil
}

// kvIPs returns a list of addresses; listWhat names the list in errors,
// itemWhat each address.
func kvIPs(v any, listWhat, itemWhat string) ([]net.IP, error) {
	l, err := kvStrings(v, listWhat)
	if err != nil {
		return nil, err
	}
	out := make([]net.IP, len(l))
	for i, a := range l {
		if out[i], err = kvIP(a, itemWhat); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// kvRoutes reads the list of routes v of what (an interface or subnet),
// each by parse, which reads one route's keys; a route is named "what
// route N" in errors.
func kvRoutes(v any, what string, parse func(route map[string]any, what string) (kvRoute, error)) ([]kvRoute, error) {
	l, err := netList(v, what+" routes")
	if err != nil {
		return nil, err
	}
	out := make([]kvRoute, 0, len(l))
	for k, r := range l {
		what := fmt.Sprintf("%s route %d", what, k)
		route, err := netMap(r, what)
		if err != nil {
			return nil, err
		}
		kr, err := parse(route, what)
		if err != nil {
			return nil, err
		}
		out = append(out, kr)
	}
	return out, nil
}

// kvSortIfaces puts named interfaces first, by name; the others keep
// their order.
func kvSortIfaces(ifaces []kvIface) {
	slices.SortStableFunc(ifaces, func(a, b kvIface) int {
		switch {
		case a.name != "" && b.name != "":
			return strings.Compare(a.name, b.name)
		case a.name != "":
			return -1
		case b.name != "":
			return 1
		}
		return 0
	})
}

// kubeVirtNoCloudIfaces reads a network-config: version 1 when it has a
// config list, else version 2 (Afterburn tells them apart by shape).
func kubeVirtNoCloudIfaces(tree any) ([]kvIface, error) {
	root, err := netConfigRoot(tree)
	if err != nil {
		return nil, err
	}
	if root["config"] != nil {
		return kubeVirtV1(root)
	}
	return kubeVirtV2(root)
}

// kubeVirtV1 reads network config version 1: physical entries, their
// subnets (static addresses, DHCP, dns_nameservers, routes, or the
// gateway when a subnet has no routes), the first nameserver entry's
// addresses for every interface.
func kubeVirtV1(root map[string]any) ([]kvIface, error) {
	entries, err := netList(root["config"], "config")
	if err != nil {
		return nil, err
	}
	var global []net.IP
	seenNS := false
	var out []kvIface
	for i, e := range entries {
		what := fmt.Sprintf("config entry %d", i)
		entry, err := netMap(e, what)
		if err != nil {
			return nil, err
		}
		switch netString(entry["type"]) {
		case "nameserver":
			if seenNS {
				continue // Afterburn uses the first
			}
			seenNS = true
			ips, err := kvIPs(entry["address"], what+" address", what+" nameserver")
			if err != nil {
				return nil, err
			}
			global = append(global, ips...)
			continue
		case "physical":
		default:
			continue
		}
		iface := kvIface{name: netString(entry["name"])}
		if iface.mac, err = kvMAC(netString(entry["mac_address"]), what); err != nil {
			return nil, err
		}
		subnets, err := netList(entry["subnets"], what+" subnets")
		if err != nil {
			return nil, err
		}
		for j, s := range subnets {
			what := fmt.Sprintf("%s subnet %d", what, j)
			subnet, err := netMap(s, what)
			if err != nil {
				return nil, err
			}
			dns, err := kvIPs(subnet["dns_nameservers"], what+" dns_nameservers", what+" nameserver")
			if err != nil {
				return nil, err
			}
			for _, ip := range dns {
				iface.addNameserver(ip)
			}
			switch typ := netString(subnet["type"]); {
			case strings.Contains(typ, "static"):
				if a := netString(subnet["address"]); a != "" {
					var n *net.IPNet
					if m := netString(subnet["netmask"]); m != "" {
						n, err = kvMasked(a, m, what+" address")
					} else {
						n, err = kvNet(a, what+" address")
					}
					if err != nil {
						return nil, err
					}
					iface.addrs = append(iface.addrs, n)
				}
			case typ == "dhcp", typ == "dhcp4":
				iface.dhcp4 = true
			case typ == "dhcp6":
				iface.dhcp6 = true
			}
			routes, err := kvRoutes(subnet["routes"], what, func(route map[string]any, what string) (kvRoute, error) {
				gw, err := kvIP(netString(route["gateway"]), what+" gateway")
				if err != nil {
					return kvRoute{}, err
				}
				var dst *net.IPNet
				switch {
				case netString(route["destination"]) != "":
					dst, err = kvNet(netString(route["destination"]), what+" destination")
				case netString(route["network"]) != "":
					if netString(route["netmask"]) == "" {
						return kvRoute{}, fmt.Errorf("%s: a network without a netmask: %w", what, errNetConfig)
					}
					dst, err = kvMasked(netString(route["network"]), netString(route["netmask"]), what+" network")
				default:
					return kvRoute{}, fmt.Errorf("%s: neither destination nor network: %w", what, errNetConfig)
				}
				return kvRoute{dst, gw}, err
			})
			if err != nil {
				return nil, err
			}
			iface.routes = append(iface.routes, routes...)
			if len(routes) == 0 && netString(subnet["gateway"]) != "" {
				gw, err := kvIP(netString(subnet["gateway"]), what+" gateway")
				if err != nil {
					return nil, err
				}
				iface.routes = append(iface.routes, kvDefault(gw))
			}
		}
		out = append(out, iface)
	}
	for i := range out {
		out[i].nameservers = append(out[i].nameservers, global...)
	}
	return out, nil
}

// kubeVirtV2 reads network config version 2's ethernets: an interface is
// named after its key unless it is matched and the key does not start
// with "eth"; gateway4/gateway6 count only without routes; the
// interface's nameservers, then the global ones not already there.
func kubeVirtV2(root map[string]any) ([]kvIface, error) {
	eths, err := netMap(root["ethernets"], "ethernets")
	if err != nil {
		return nil, err
	}
	var out []kvIface
	for _, key := range sortedKeys(eths) {
		what := "ethernet " + key
		eth, err := netMap(eths[key], what)
		if err != nil {
			return nil, err
		}
		match, err := netMap(eth["match"], what+" match")
		if err != nil {
			return nil, err
		}
		iface := kvIface{name: key}
		if eth["match"] != nil && !strings.HasPrefix(key, "eth") {
			iface.name = ""
		}
		if iface.mac, err = kvMAC(netString(match["macaddress"]), what); err != nil {
			return nil, err
		}
		iface.dhcp4 = netString(eth["dhcp4"]) == "true"
		iface.dhcp6 = netString(eth["dhcp6"]) == "true"
		addrs, err := kvStrings(eth["addresses"], what+" addresses")
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			n, err := kvNet(a, what+" address")
			if err != nil {
				return nil, err
			}
			iface.addrs = append(iface.addrs, n)
		}
		routes, err := kvRoutes(eth["routes"], what, func(route map[string]any, what string) (kvRoute, error) {
			dst, err := kvNet(netString(route["to"]), what+" to")
			if err != nil {
				return kvRoute{}, err
			}
			gw, err := kvIP(netString(route["via"]), what+" via")
			return kvRoute{dst, gw}, err
		})
		if err != nil {
			return nil, err
		}
		iface.routes = append(iface.routes, routes...)
		if len(routes) == 0 {
			for _, k := range []string{"gateway4", "gateway6"} {
				if g := netString(eth[k]); g != "" {
					gw, err := kvIP(g, what+" "+k)
					if err != nil {
						return nil, err
					}
					iface.routes = append(iface.routes, kvDefault(gw))
				}
			}
		}
		ns, err := netMap(eth["nameservers"], what+" nameservers")
		if err != nil {
			return nil, err
		}
		list, err := kvIPs(ns["addresses"], what+" nameservers", what+" nameserver")
		if err != nil {
			return nil, err
		}
		iface.nameservers = append(iface.nameservers, list...)
		out = append(out, iface)
	}
	kvSortIfaces(out)
	gns, err := netMap(root["nameservers"], "nameservers")
	if err != nil {
		return nil, err
	}
	global, err := kvIPs(gns["addresses"], "nameservers addresses", "nameserver")
	if err != nil {
		return nil, err
	}
	for _, ip := range global {
		for i := range out {
			out[i].addNameserver(ip)
		}
	}
	return out, nil
}

// kubeVirtConfigDriveIfaces reads OpenStack's network_data.json: one
// interface per link that has networks (ipv4, ipv6 with their netmask
// and routes, ipv4_dhcp, ipv6_dhcp), its networks' dns_nameservers and
// then the dns services.
func kubeVirtConfigDriveIfaces(tree any) ([]kvIface, error) {
	root, err := netMap(tree, "the document")
	if err != nil {
		return nil, err
	}
	links, err := netList(root["links"], "links")
	if err != nil {
		return nil, err
	}
	networks, err := netList(root["networks"], "networks")
	if err != nil {
		return nil, err
	}
	services, err := netList(root["services"], "services")
	if err != nil {
		return nil, err
	}
	var dns []net.IP
	for i, s := range services {
		svc, err := netMap(s, fmt.Sprintf("service %d", i))
		if err != nil {
			return nil, err
		}
		if netString(svc["type"]) != "dns" {
			continue
		}
		ip, err := kvIP(netString(svc["address"]), fmt.Sprintf("service %d address", i))
		if err != nil {
			return nil, err
		}
		dns = append(dns, ip)
	}
	var out []kvIface
	for i, l := range links {
		what := fmt.Sprintf("link %d", i)
		link, err := netMap(l, what)
		if err != nil {
			return nil, err
		}
		id := netString(link["id"])
		iface := kvIface{name: netString(link["name"])}
		has := false
		for j, n := range networks {
			what := fmt.Sprintf("network %d", j)
			nw, err := netMap(n, what)
			if err != nil {
				return nil, err
			}
			if netString(nw["link"]) != id {
				continue
			}
			has = true
			switch netString(nw["type"]) {
			case "ipv4", "ipv6":
				if a := netString(nw["ip_address"]); a != "" {
					var n *net.IPNet
					if m := netString(nw["netmask"]); m != "" {
						n, err = kvMasked(a, m, what+" ip_address")
					} else {
						n, err = kvNet(a, what+" ip_address")
					}
					if err != nil {
						return nil, err
					}
					iface.addrs = append(iface.addrs, n)
				}
			case "ipv4_dhcp":
				iface.dhcp4 = true
			case "ipv6_dhcp":
				iface.dhcp6 = true
			}
			ns, err := kvIPs(nw["dns_nameservers"], what+" dns_nameservers", what+" nameserver")
			if err != nil {
				return nil, err
			}
			for _, ip := range ns {
				iface.addNameserver(ip)
			}
			routes, err := kvRoutes(nw["routes"], what, func(route map[string]any, what string) (kvRoute, error) {
				dst, err := kvMasked(netString(route["network"]), netString(route["netmask"]), what+" network")
				if err != nil {
					return kvRoute{}, err
				}
				gw, err := kvIP(netString(route["gateway"]), what+" gateway")
				return kvRoute{dst, gw}, err
			})
			if err != nil {
				return nil, err
			}
			iface.routes = append(iface.routes, routes...)
		}
		if !has {
			continue
		}
		if iface.mac, err = kvMAC(netString(link["ethernet_mac_address"]), what); err != nil {
			return nil, err
		}
		for _, ip := range dns {
			iface.addNameserver(ip)
		}
		out = append(out, iface)
	}
	kvSortIfaces(out)
	return out, nil
}

// kvBracket writes an IPv6 address in brackets, as dracut wants it.
func kvBracket(s string, ip net.IP) string {
	if ip.To4() == nil {
		return "[" + s + "]"
	}
	return s
}

// kubeVirtKargs builds the arguments from the interfaces.
func kubeVirtKargs(ifaces []kvIface) string {
	var kargs []string
	var nameservers []net.IP
	for _, iface := range ifaces {
		id := iface.name
		if id == "" {
			id = iface.mac
		}
		if id == "" {
			continue
		}
		for _, a := range iface.addrs {
			if a.IP.To4() != nil {
				kargs = append(kargs, fmt.Sprintf("ip=%s:::%s::%s:static", a.IP, net.IP(a.Mask), id))
			} else {
				ones, _ := a.Mask.Size()
				kargs = append(kargs, fmt.Sprintf("ip=[%s]:::%d::%s:static", a.IP, ones, id))
			}
		}
		switch {
		case iface.dhcp4 && iface.dhcp6:
			kargs = append(kargs, "ip="+id+":dhcp,dhcp6")
		case iface.dhcp4:
			kargs = append(kargs, "ip="+id+":dhcp")
		case iface.dhcp6:
			kargs = append(kargs, "ip="+id+":dhcp6")
		}
		for _, r := range iface.routes {
			if ones, _ := r.dst.Mask.Size(); ones != 0 {
				continue
			}
			kargs = append(kargs, fmt.Sprintf("rd.route=%s:%s", kvBracket(r.dst.IP.String()+"/0", r.dst.IP), kvBracket(r.gw.String(), r.gw)))
		}
		for _, ns := range iface.nameservers {
			if !slices.ContainsFunc(nameservers, ns.Equal) {
				nameservers = append(nameservers, ns)
			}
		}
	}
	for _, ns := range nameservers {
		kargs = append(kargs, "nameserver="+kvBracket(ns.String(), ns))
	}
	return strings.Join(kargs, " ")
}

// kubeVirtKargsWait bounds the wait for a config-2 or cidata drive's
// device, as proxmoxKargsWait.
const kubeVirtKargsWait = 5 * time.Second

// NetworkKargs finds the config-2 drive, else the cidata drive, without
// udev (loading virtio_blk first when its driver is not there, as
// Afterburn does), and returns the arguments from its network
// description; ok is false with no drive or no description. A
// description that does not parse fails, as in Afterburn.
func (p kubevirtProvider) NetworkKargs(ctx context.Context) (string, bool, error) {
	env := withSystemMounter(p.env)
	log := env.logger().With("platform", "kubevirt")
	if env.Runner != nil {
		if _, err := os.Stat(env.path("/sys/bus/virtio/drivers/virtio_blk")); errors.Is(err, os.ErrNotExist) {
			if _, err := env.Runner.Run(ctx, "modprobe", "virtio_blk"); err != nil {
				log.Warn("modprobe virtio_blk failed", "error", err)
			}
		}
	}
	var dev, file string
	found, err := pollUntil(ctx, env.wait(kubeVirtKargsWait), 100*time.Millisecond, func() bool {
		var ok bool
		if dev, ok = findDriveInSysfs(env, configDriveLabels); ok {
			file = "/openstack/latest/network_data.json"
		} else if dev, ok = findDriveInSysfs(env, cidataLabels); ok {
			file = ncNetConfig
		}
		return ok
	})
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: waiting for a config drive: %w", err)
	}
	if !found {
		log.Info("no config-2 nor cidata drive among the block devices: no network arguments from it")
		return "", false, nil
	}
	data, err := withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		return readDriveData(dir, dev, file)
	})
	if errors.Is(err, ErrNoConfig) {
		log.Info("the drive has no network description: no network arguments from it", "device", dev, "file", file)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: %w", err)
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: %s on %s: %w: %w", file, filepath.Base(dev), ErrProtocol, err)
	}
	var ifaces []kvIface
	if file == ncNetConfig {
		ifaces, err = kubeVirtNoCloudIfaces(tree)
	} else {
		ifaces, err = kubeVirtConfigDriveIfaces(tree)
	}
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: %s on %s: %w: %w", file, filepath.Base(dev), ErrProtocol, err)
	}
	kargs := kubeVirtKargs(ifaces)
	return kargs, kargs != "", nil
}
