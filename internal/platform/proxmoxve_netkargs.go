package platform

// Proxmox VE's initramfs network arguments, as Afterburn's
// rd_network_kargs for proxmoxve (coreos/afterburn
// src/providers/proxmoxve/cloudconfig.rs): from the cidata drive's
// network-config (cloud-init network config version 1, as Proxmox VE
// writes it), for each physical interface in order, each static address
// as ip=ADDR::GATEWAY:NETMASK:::off (IPv6: [ADDR]::[GATEWAY]:PREFIX, the
// gateway that of the first static subnet of the family that names one,
// and none when none does), ip=dhcp or ip=dhcp6 (the interface's last DHCP
// subnet), and the nameserver entry's addresses as nameserver=A,B after
// each interface. A description Afterburn cannot turn into interfaces
// (an address that does not parse, more than one nameserver entry) gives
// no arguments: the distribution's default then applies.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// proxmoxKargsWait bounds the wait for the cidata drive's device: the
// kernel has it before udev runs, when the unit runs, unless its driver
// is still probing.
const proxmoxKargsWait = 5 * time.Second

// NetworkKargs finds the cidata drive without udev, reads its
// network-config and returns the arguments; ok is false when there is no
// drive, no network-config, or nothing in it to turn into arguments.
func (p proxmoxProvider) NetworkKargs(ctx context.Context) (string, bool, error) {
	env := withSystemMounter(p.env)
	log := env.logger().With("platform", "proxmoxve")
	var dev string
	found, err := pollUntil(ctx, env.wait(proxmoxKargsWait), 100*time.Millisecond, func() bool {
		var ok bool
		dev, ok = findDriveInSysfs(env, cidataLabels)
		return ok
	})
	if err != nil {
		return "", false, fmt.Errorf("proxmoxve: waiting for the cidata drive: %w", err)
	}
	if !found {
		log.Info("no cidata drive among the block devices: no network arguments from it")
		return "", false, nil
	}
	data, err := withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		return readDriveData(dir, dev, ncNetConfig)
	})
	if errors.Is(err, ErrNoConfig) {
		log.Info("the cidata drive has no network-config: no network arguments from it", "device", dev)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("proxmoxve: %w", err)
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return "", false, fmt.Errorf("proxmoxve: cidata drive %s: %w: %w", ncNetConfig, ErrProtocol, err)
	}
	kargs, err := proxmoxKargs(tree)
	if err != nil {
		log.Warn("network-config does not describe interfaces Afterburn reads: no network arguments from it", "error", err)
		return "", false, nil
	}
	return kargs, kargs != "", nil
}

// proxmoxKargs turns a network config version 1 tree into arguments.
func proxmoxKargs(tree any) (string, error) {
	root, err := netMap(tree, "the document")
	if err != nil {
		return "", err
	}
	entries, err := netList(root["config"], "config")
	if err != nil {
		return "", err
	}
	var nameservers []string
	nsEntries := 0
	for i, e := range entries {
		entry, err := netMap(e, fmt.Sprintf("config entry %d", i))
		if err != nil {
			return "", err
		}
		if netString(entry["type"]) != "nameserver" {
			continue
		}
		if nsEntries++; nsEntries > 1 {
			return "", fmt.Errorf("more than one nameserver entry: %w", errNetConfig)
		}
		addrs, err := netList(entry["address"], "nameserver address")
		if err != nil {
			return "", err
		}
		for _, a := range addrs {
			ip := net.ParseIP(netString(a))
			if ip == nil {
				return "", fmt.Errorf("nameserver %q: not an IP address: %w", netString(a), errNetConfig)
			}
			nameservers = append(nameservers, ip.String())
		}
	}
	var kargs []string
	for i, e := range entries {
		what := fmt.Sprintf("config entry %d", i)
		entry, _ := netMap(e, what)
		if netString(entry["type"]) != "physical" {
			continue
		}
		subnets, err := netList(entry["subnets"], what+" subnets")
		if err != nil {
			return "", err
		}
		type static struct {
			ip   net.IP
			mask string // dotted for IPv4, the prefix length for IPv6
		}
		var addrs []static
		var gw4, gw6 net.IP
		dhcp := ""
		for j, s := range subnets {
			what := fmt.Sprintf("%s subnet %d", what, j)
			subnet, err := netMap(s, what)
			if err != nil {
				return "", err
			}
			switch typ := netString(subnet["type"]); {
			case strings.Contains(typ, "static"):
				a, err := staticAddress(netString(subnet["address"]), netString(subnet["netmask"]))
				if err != nil {
					return "", fmt.Errorf("%s: %w", what, err)
				}
				addrs = append(addrs, static(a))
				if g := netString(subnet["gateway"]); g != "" {
					ip := net.ParseIP(g)
					if ip == nil {
						return "", fmt.Errorf("%s: gateway %q: not an IP address: %w", what, g, errNetConfig)
					}
					if ip.To4() != nil && gw4 == nil {
						gw4 = ip
					} else if ip.To4() == nil && gw6 == nil {
						gw6 = ip
					}
				}
			case typ == "dhcp", typ == "dhcp4":
				dhcp = "ip=dhcp"
			case typ == "dhcp6":
				dhcp = "ip=dhcp6"
			}
		}
		for _, a := range addrs {
			if a.ip.To4() != nil {
				gw := ""
				if gw4 != nil {
					gw = gw4.String()
				}
				kargs = append(kargs, fmt.Sprintf("ip=%s::%s:%s:::off", a.ip, gw, a.mask))
			} else {
				gw := ""
				if gw6 != nil {
					gw = "[" + gw6.String() + "]"
				}
				kargs = append(kargs, fmt.Sprintf("ip=[%s]::%s:%s:::off", a.ip, gw, a.mask))
			}
		}
		if dhcp != "" {
			kargs = append(kargs, dhcp)
		}
		if len(nameservers) > 0 {
			kargs = append(kargs, "nameserver="+strings.Join(nameservers, ","))
		}
	}
	return strings.Join(kargs, " "), nil
}

// staticAddress reads a static subnet's address: "ADDR/PREFIX", or ADDR
// with a dotted netmask, or ADDR alone (a host address, /32 or /128),
// parsed as the KubeVirt network config's are (kvNet, kvMasked). It
// returns the address and, for dracut's ip=, the dotted netmask (IPv4) or
// the prefix length (IPv6).
func staticAddress(addr, netmask string) (struct {
	ip   net.IP
	mask string
}, error) {
	var out struct {
		ip   net.IP
		mask string
	}
	if addr == "" {
		return out, fmt.Errorf("a static subnet without an address: %w", errNetConfig)
	}
	var n *net.IPNet
	var err error
	switch {
	case strings.Contains(addr, "/") || netmask == "":
		n, err = kvNet(addr, "address")
	case net.ParseIP(netmask) == nil:
		// Afterburn's netmask is an address, never a prefix length.
		return out, fmt.Errorf("netmask %q: not one: %w", netmask, errNetConfig)
	default:
		n, err = kvMasked(addr, netmask, "address")
	}
	if err != nil {
		return out, err
	}
	out.ip = n.IP
	if out.ip.To4() != nil {
		out.mask = net.IP(n.Mask).String()
		return out, nil
	}
	ones, _ := n.Mask.Size()
	out.mask = strconv.Itoa(ones)
	return out, nil
}
