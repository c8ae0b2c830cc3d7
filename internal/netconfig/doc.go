// Package netconfig reads the network descriptions a VM's platform hands
// it — cloud-init's network config version 1 and version 2 (a NoCloud
// drive's network-config) and OpenStack's network_data.json (a config-2
// drive's) — into one type, Config, and projects that type into what
// flint writes from it.
//
// One reader, many projections: Read turns any of the three formats into
// interfaces (name, MAC address, MTU), their subnets (static addresses
// with their prefix length and gateway, DHCP for IPv4 or IPv6, in the
// description's order), routes, and resolver settings (nameservers and
// search domains, per interface and global). The projections are plain
// functions of a Config:
//
//   - the agent's <PLATFORM>_IPV4 and _IPV6 attributes (KubeVirtAddresses,
//     ProxmoxVEAddresses), as Afterburn picks them
//     (coreos/afterburn src/providers/kubevirt/cloudconfig.rs,
//     src/providers/proxmoxve/cloudconfig.rs, attributes);
//   - the initramfs network arguments for dracut (KubeVirtKargs,
//     ProxmoxVEKargs), as Afterburn's rd_network_kargs builds them for
//     each platform.
//
// Afterburn's network outputs are projections of a second type, Network
// (network.go), shaped exactly as Afterburn's network::Interface and
// VirtualNetDev (coreos/afterburn src/network.rs: name, MAC or path,
// priority, addresses, DHCP, routes, nameservers, bond, unmanaged,
// required-for-online; bonds and VLANs with their free-form sections),
// because the platforms build it from metadata that is no network
// description (Equinix Metal's bonds, DigitalOcean's interfaces) as well
// as from one (ProxmoxVELinks, KubeVirtLinks from a Config):
//
//   - systemd-networkd .network and .netdev units (NetworkdUnits);
//   - NetworkManager keyfiles (NMKeyfiles);
//   - netplan documents in Hetzner's and Proxmox VE's styles (Netplan).
//
// Each writes what Afterburn's sd_config, sd_netdev_config, nm_config and
// the providers' netplan_config write, key for key.
//
// What the formats say but a projection does not use is kept rather than
// dropped when it is part of the same facts (a v1 subnet's gateway beside
// the default route made from it, each v1 nameserver entry), because
// Afterburn's providers read the same description differently: KubeVirt
// merges DHCP subnets and takes the first nameserver entry, Proxmox VE
// takes the last DHCP subnet and refuses a second nameserver entry.
//
// Malformed input is refused with an error naming where (config entry 2
// subnet 0 netmask, ethernet eth0 address 1) and wrapping ErrInvalid: a
// value of the wrong kind, an address that is not one, a netmask that is
// not contiguous or not of the address's family. Errors never quote the
// document's values.
//
// Family: config sources, platforms and agent (internal/README.md).
package netconfig
