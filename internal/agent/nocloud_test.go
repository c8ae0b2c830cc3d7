//go:build unix

package agent

import (
	"github.com/flintboot/flint/internal/platform"

	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// driveRoot makes a root whose /dev/disk/by-label/<label> is an ISO 9660
// image, and a mounter that shows files (path on the drive → contents).
func driveRoot(t *testing.T, label string, files map[string]string) (string, *driveMounter) {
	t.Helper()
	root := t.TempDir()
	return root, addDrive(t, root, label, files)
}

// addDrive puts the drive of driveRoot under root.
func addDrive(t *testing.T, root, label string, files map[string]string) *driveMounter {
	t.Helper()
	dev := filepath.Join(root, "dev/disk/by-label", label)
	os.MkdirAll(filepath.Dir(dev), 0o755)
	img := make([]byte, 0x8000+2048)
	copy(img[0x8001:], "CD001")
	if err := os.WriteFile(dev, img, 0o644); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	for name, data := range files {
		p := filepath.Join(tree, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &driveMounter{tree: tree}
}

// IBM Cloud's drive as Afterburn's test fixture has it: MIME vendor-data
// whose first text/cloud-config part holds the keys, folded over two lines.
const ibmVendorData = "Content-Type: multipart/form-data; boundary=3efa30189c9e\nMIME-Version: 1.0\n\n" +
	"--3efa30189c9e\nContent-Type: text/cloud-config\n\n#cloud-config\ndisable_root: false\nssh_authorized_keys:\n" +
	"- ssh-rsa AAAAB3NzaC1yc2 3TIX+eesnqasq9w==\n  testuser@test.com\n- ssh-ed25519 AAAAC3Nza\n  testuser2@test.com\n" +
	"users:\n- default\n- name: root\n  lock-passwd: false\n  ssh_pwauth: true\n\n" +
	"--3efa30189c9e\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho ssh_authorized_keys: none\n\n" +
	"--3efa30189c9e\nContent-Type: text/cloud-config\n\n#cloud-config\n\nwrite_files:\n  -\n    content: |\n        [base]\n        name=x\n    path: /etc/yum.repos.d/x.repo\n\n" +
	"--3efa30189c9e--\n"

// Proxmox VE's generated user-data, with the password hash that must not
// leak into errors.
const proxmoxUserData = "#cloud-config\nhostname: pve-vm\nmanage_etc_hosts: true\nfqdn: pve-vm.example.com\nuser: core\n" +
	"password: $5$6LDowW6p$.RyFu8lVH7Cw3AB\nssh_authorized_keys:\n  - ssh-rsa AAAAB3Nza dummy@dummy.local\n  - ssh-ed25519 AAAAC3 second\n" +
	"chpasswd:\n  expire: False\nusers:\n  - default\npackage_upgrade: true\n"

const proxmoxNetworkConfig = "version: 1\nconfig:\n    - type: physical\n      name: eth0\n      mac_address: 'bc:24:11:00:00:01'\n      subnets:\n      - type: dhcp4\n"

// Proxmox VE's generated network-config (v1) for a VM with static
// addresses on its first NIC and DHCP on its second.
const proxmoxStaticNetworkConfig = `version: 1
config:
    - type: physical
      name: eth0
      mac_address: 'bc:24:11:5e:3a:9f'
      subnets:
      - type: static
        address: '192.168.1.1'
        netmask: '255.255.255.0'
        gateway: '192.168.1.254'
      - type: static6
        address: '2001:db8:85a3::8a2e:370:0/64'
        gateway: '2001:db8:85a3::8a2e:370:1'
      - type: static
        address: '192.168.2.1/24'
    - type: physical
      name: eth1
      mac_address: 'bc:24:11:5e:3a:a0'
      subnets:
      - type: dhcp4
    - type: nameserver
      address:
      - '1.1.1.1'
      - '2606:4700:4700::1111'
      search:
      - 'example.com'
`

// KubeVirt's NoCloud networkData as users write it (v2): a MAC-matched
// interface named after its network, one on DHCP, two with static
// addresses.
const kubeVirtNetworkConfigV2 = `version: 2
ethernets:
  default:
    match:
      macaddress: "02:00:00:0a:0b:0c"
    addresses:
      - 10.0.2.20/24
    dhcp4: false
  eth0:
    dhcp4: true
    dhcp6: true
  eth1:
    addresses:
      - 192.168.1.10/24
      - 2001:db8::10/64
      - 192.168.1.11/24
    gateway4: 192.168.1.1
    gateway6: 2001:db8::1
    nameservers:
      addresses: [8.8.8.8, "2001:4860:4860::8888"]
    routes:
      - to: 10.10.0.0/16
        via: 192.168.1.254
  eth2:
    addresses: ["172.16.0.5/24"]
`

// The same in version 1: the first physical entry is on DHCP.
const kubeVirtNetworkConfigV1 = `network:
  version: 1
  config:
  - type: physical
    name: eth0
    mac_address: "02:00:00:0a:0b:0c"
    subnets:
    - type: dhcp
  - type: physical
    name: eth1
    subnets:
    - type: static6
      address: fd00::20/64
    - type: static
      address: 10.0.2.20
      netmask: 255.255.255.0
      gateway: 10.0.2.1
      dns_nameservers:
      - 10.0.2.3
      routes:
      - network: 10.10.0.0
        netmask: 255.255.0.0
        gateway: 10.0.2.254
`

// KubeVirt's config drive network_data.json (OpenStack's format): the
// unnamed link comes after the named one.
const kubeVirtNetworkData = `{
  "links": [
    {"id": "tap0", "type": "phy", "ethernet_mac_address": "02:00:00:0a:0b:0c", "mtu": 1500},
    {"id": "tap1", "name": "eth0", "type": "phy", "ethernet_mac_address": "02:00:00:0a:0b:0d"}
  ],
  "networks": [
    {"id": "network0", "type": "ipv4", "link": "tap0", "ip_address": "10.0.0.9", "netmask": "255.255.255.0"},
    {"id": "network1", "type": "ipv4_dhcp", "link": "tap1"},
    {"id": "network2", "type": "ipv6", "link": "tap1", "ip_address": "fd10::5", "netmask": "64"},
    {"id": "network3", "type": "ipv4", "link": "tap1", "ip_address": "10.1.0.5", "netmask": "255.255.255.0",
     "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.1.0.1"}]},
    {"id": "network4", "type": "ipv4", "link": "tap1", "ip_address": "10.1.0.6", "netmask": "255.255.255.0"}
  ],
  "services": [{"type": "dns", "address": "8.8.8.8"}]
}`

func TestNoCloudMetadata(t *testing.T) {
	for _, c := range []struct {
		id, label string
		files     map[string]string
		hostname  string
		keys      []string
		attrs     []platform.Attribute
	}{
		{"ibmcloud", "cidata", map[string]string{
			"meta-data":      "instance-id: 0717_2a588fe2-7da2-4321\nlocal-hostname: vsi-1\n",
			"user-data":      `{"ignition":{"version":"3.4.0"}}`,
			"vendor-data":    ibmVendorData,
			"network-config": "version: 1\nconfig: []\n",
		}, "vsi-1", []string{"ssh-rsa AAAAB3NzaC1yc2 3TIX+eesnqasq9w== testuser@test.com", "ssh-ed25519 AAAAC3Nza testuser2@test.com"},
			[]platform.Attribute{{Name: "IBMCLOUD_INSTANCE_ID", Value: "0717_2a588fe2-7da2-4321"}, {Name: "IBMCLOUD_LOCAL_HOSTNAME", Value: "vsi-1"}}},
		{"proxmoxve", "cidata", map[string]string{
			"meta-data":      "instance-id: 15a9919cb91024fbd1d70fa07f0efa749cbba03b\n",
			"user-data":      proxmoxUserData,
			"vendor-data":    "",
			"network-config": proxmoxStaticNetworkConfig,
		}, "pve-vm", []string{"ssh-rsa AAAAB3Nza dummy@dummy.local", "ssh-ed25519 AAAAC3 second"},
			[]platform.Attribute{{Name: "PROXMOXVE_INSTANCE_ID", Value: "15a9919cb91024fbd1d70fa07f0efa749cbba03b"}, {Name: "PROXMOXVE_HOSTNAME", Value: "pve-vm"},
				{Name: "PROXMOXVE_IPV4", Value: "192.168.2.1"}, {Name: "PROXMOXVE_IPV6", Value: "2001:db8:85a3::8a2e:370:0"}}},
		// A custom user-data holding the Ignition config: no keys, no hostname.
		{"proxmoxve", "cidata", map[string]string{
			"meta-data":      "instance-id: 15a9\n",
			"user-data":      `{"ignition":{"version":"3.4.0"}}`,
			"network-config": proxmoxNetworkConfig,
		}, "", nil, []platform.Attribute{{Name: "PROXMOXVE_INSTANCE_ID", Value: "15a9"}}},
		// KubeVirt writes its NoCloud meta-data as JSON.
		{"kubevirt", "cidata", map[string]string{
			"meta-data": `{"instance-type":"u1.small","instance-id":"5d307ca9-b3ef","local-hostname":"vm-nc","public-keys":{"1":"ssh-rsa BBBB two","0":"ssh-ed25519 AAAA one"}}`,
			"user-data": `{"ignition":{"version":"3.4.0"}}`,
		}, "vm-nc", []string{"ssh-ed25519 AAAA one", "ssh-rsa BBBB two"},
			[]platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-nc"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: "5d307ca9-b3ef"}, {Name: "KUBEVIRT_INSTANCE_TYPE", Value: "u1.small"}}},
		{"kubevirt", "cidata", map[string]string{
			"meta-data":      "instance-id: vm-v2.default\nlocal-hostname: vm-v2\n",
			"network-config": kubeVirtNetworkConfigV2,
		}, "vm-v2", nil, []platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-v2"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: "vm-v2.default"},
			{Name: "KUBEVIRT_IPV4", Value: "192.168.1.10"}, {Name: "KUBEVIRT_IPV6", Value: "2001:db8::10"}}},
		{"kubevirt", "cidata", map[string]string{
			"meta-data":      "instance-id: vm-v1.default\nlocal-hostname: vm-v1\n",
			"network-config": kubeVirtNetworkConfigV1,
		}, "vm-v1", nil, []platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-v1"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: "vm-v1.default"},
			{Name: "KUBEVIRT_IPV4", Value: "10.0.2.20"}, {Name: "KUBEVIRT_IPV6", Value: "fd00::20"}}},
		{"kubevirt", "config-2", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}, "vm-1.novalocal",
			[]string{"ssh-ed25519 AAAA alpha", "ssh-rsa ZZZZ zeta"},
			[]platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: "83679162-1378-4288-a2d4-70e13ec132aa"}, {Name: "FLINT_KUBEVIRT_AVAILABILITY_ZONE", Value: "nova"}}},
		// The labels in capitals, as some tools write them.
		{"kubevirt", "CONFIG-2", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}, "vm-1.novalocal",
			[]string{"ssh-ed25519 AAAA alpha", "ssh-rsa ZZZZ zeta"},
			[]platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: "83679162-1378-4288-a2d4-70e13ec132aa"}, {Name: "FLINT_KUBEVIRT_AVAILABILITY_ZONE", Value: "nova"}}},
		{"proxmoxve", "CIDATA", map[string]string{
			"meta-data":      "instance-id: 15a9\n",
			"user-data":      `{"ignition":{"version":"3.4.0"}}`,
			"network-config": proxmoxNetworkConfig,
		}, "", nil, []platform.Attribute{{Name: "PROXMOXVE_INSTANCE_ID", Value: "15a9"}}},
		{"kubevirt", "config-2", map[string]string{"openstack/latest/meta_data.json": metaDataJSON, "openstack/latest/network_data.json": kubeVirtNetworkData}, "vm-1.novalocal",
			[]string{"ssh-ed25519 AAAA alpha", "ssh-rsa ZZZZ zeta"},
			[]platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: "83679162-1378-4288-a2d4-70e13ec132aa"}, {Name: "FLINT_KUBEVIRT_AVAILABILITY_ZONE", Value: "nova"},
				{Name: "KUBEVIRT_IPV4", Value: "10.1.0.5"}, {Name: "KUBEVIRT_IPV6", Value: "fd10::5"}}},
	} {
		t.Run(c.id+"/"+c.label, func(t *testing.T) {
			root, mounter := driveRoot(t, c.label, c.files)
			a := newTestAgent(t, c.id, "http://127.0.0.1:1", root)
			a.d.Mounter = mounter
			m, err := a.fetchMetadata(context.Background(), "test")
			if err != nil {
				t.Fatalf("metadata: %v", err)
			}
			if m.Hostname != c.hostname || !slices.Equal(m.Keys, c.keys) || !slices.Equal(m.Attrs, c.attrs) {
				t.Errorf("hostname %q, keys %q, attributes %v;\nwant %q, %q, %v", m.Hostname, m.Keys, m.Attrs, c.hostname, c.keys, c.attrs)
			}
			if len(mounter.mounts) != 1 || !strings.HasSuffix(mounter.mounts[0], "/"+c.label+" iso9660") || len(mounter.unmount) != 1 {
				t.Errorf("mounts %v, unmounts %v; want one read-only mount of %s, unmounted", mounter.mounts, mounter.unmount, c.label)
			}
		})
	}
}

// The keys file goes when the drive has no keys any more.
func TestNoCloudNoKeysRemovesFile(t *testing.T) {
	root := userRoot(t)
	mounter := addDrive(t, root, "cidata", map[string]string{"meta-data": "instance-id: i-1\nlocal-hostname: h\n", "vendor-data": "#cloud-config\ndisable_root: false\n"})
	keys := filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")
	os.MkdirAll(filepath.Dir(keys), 0o700)
	os.WriteFile(keys, []byte("ssh-rsa OLD\n"), 0o600)
	a := newTestAgent(t, "ibmcloud", "http://127.0.0.1:1", root)
	a.d.Mounter = mounter
	if err := a.SSHKeys(context.Background(), "core"); err != nil {
		t.Fatalf("ssh-keys: %v", err)
	}
	if _, err := os.Stat(keys); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("keys file after the platform dropped its keys: %v, want it removed", err)
	}
}

func TestNoCloudFailures(t *testing.T) {
	for _, c := range []struct {
		name, id string
		files    map[string]string
		want     string
		label    string // cidata when empty
	}{
		{"no meta-data", "ibmcloud", map[string]string{"user-data": "{}"}, "meta-data is missing", ""},
		{"meta-data a list", "proxmoxve", map[string]string{"meta-data": "- instance-id: x\n"}, "line 1: not a mapping of keys", ""},
		{"nested hostname", "ibmcloud", map[string]string{"meta-data": "instance-id: x\nlocal-hostname:\n  name: h\n"}, `key "local-hostname"`, ""},
		{"key in a mapping list", "proxmoxve", map[string]string{"meta-data": "instance-id: x\n", "user-data": "#cloud-config\nssh_authorized_keys:\n  - name: k\n    password: $5$secret\n"}, `line 3: key "ssh_authorized_keys"`, ""},
		{"key twice", "proxmoxve", map[string]string{"meta-data": "instance-id: x\n", "user-data": "#cloud-config\nhostname: a\nhostname: secret\n"}, "line 3: a key given twice", ""},
		{"broken JSON", "kubevirt", map[string]string{"meta-data": `{"instance-id": 42`}, "meta-data", ""},
		{"encoded cloud-config part", "ibmcloud", map[string]string{"meta-data": "instance-id: x\n", "vendor-data": "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\nContent-Transfer-Encoding: quoted-printable\n\n#cloud-config\nssh_authorized_keys:\n- ssh-rsa A=3D\n--b--\n"}, "transfer encoding", ""},
		{"unterminated MIME", "ibmcloud", map[string]string{"meta-data": "instance-id: x\n", "vendor-data": "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\n\n#cloud-config\nssh_authorized_keys:\n- ssh-rsa A\n"}, "closing boundary", ""},
		{"vendor-data not MIME", "ibmcloud", map[string]string{"meta-data": "instance-id: x\n", "vendor-data": "echo hi\n"}, "not #cloud-config nor MIME", ""},
		{"network-config with a tab", "proxmoxve", map[string]string{"meta-data": "instance-id: x\n", "network-config": "version: 1\nconfig:\n\t- type: secret\n"}, "/network-config: ", ""},
		{"network-config block scalar", "kubevirt", map[string]string{"meta-data": "instance-id: x\n", "network-config": "version: 2\nethernets:\n  eth0:\n    addresses: |\n      secret\n"}, "ethernet eth0 addresses: not a list", ""},
		{"network-config not an address", "kubevirt", map[string]string{"meta-data": "instance-id: x\n", "network-config": "version: 2\nethernets:\n  eth0:\n    addresses: [secret/24]\n"}, "ethernet eth0 address 0: not an IP address", ""},
		{"netplan address with options", "kubevirt", map[string]string{"meta-data": "instance-id: x\n", "network-config": "version: 2\nethernets:\n  eth0:\n    addresses:\n      - 10.0.0.2/24:\n          label: secret\n"}, "a mapping, want", ""},
		{"v1 subnets a mapping", "proxmoxve", map[string]string{"meta-data": "instance-id: x\n", "network-config": "version: 1\nconfig:\n  - type: physical\n    subnets:\n      type: secret\n"}, "config entry 0 subnets: not a list", ""},
		{"unknown version", "kubevirt", map[string]string{"meta-data": "instance-id: x\n", "network-config": "version: 3\n"}, "network config version 3", ""},
		{"network_data.json broken", "kubevirt", map[string]string{"openstack/latest/meta_data.json": metaDataJSON, "openstack/latest/network_data.json": `{"links": [{"id": "secret"`}, "network_data.json", "config-2"},
		{"network_data.json address", "kubevirt", map[string]string{"openstack/latest/meta_data.json": metaDataJSON, "openstack/latest/network_data.json": `{"links": [{"id": "t"}], "networks": [{"type": "ipv4", "link": "t", "ip_address": "secret"}]}`}, "network 0 ip_address: not an IP address", "config-2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.label == "" {
				c.label = "cidata"
			}
			root, mounter := driveRoot(t, c.label, c.files)
			a := newTestAgent(t, c.id, "http://127.0.0.1:1", root)
			a.d.Mounter = mounter
			_, err := a.fetchMetadata(context.Background(), "test")
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ErrProtocol saying %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error quotes the drive's contents: %v", err)
			}
		})
	}
	// No drive at all: an error on IBM Cloud, whose drive is always there.
	a := newTestAgent(t, "ibmcloud", "http://127.0.0.1:1", t.TempDir())
	if _, err := a.fetchMetadata(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), "no config drive appeared") {
		t.Errorf("ibmcloud without a drive: %v, want an error naming the drive", err)
	}
}

// TestNoCloudNoDrive: Proxmox VE and KubeVirt VMs may have no cloud-init
// drive at all (the config on the kernel command line); like Afterburn's
// no-op fallback (coreos/afterburn src/providers/proxmoxve/mod.rs,
// src/providers/kubevirt/mod.rs), the agent then has nothing to do and
// does not fail the boot. A custom Proxmox VE user-data holding the
// config has no hostname either.
func TestNoCloudNoDrive(t *testing.T) {
	for _, id := range []string{"proxmoxve", "kubevirt"} {
		a := newTestAgent(t, id, "http://127.0.0.1:1", t.TempDir())
		sysroot := t.TempDir()
		if err := a.Hostname(context.Background(), sysroot); err != nil {
			t.Errorf("%s without a drive: Hostname() = %v, want nil", id, err)
		}
		if _, err := os.Stat(filepath.Join(sysroot, "etc/hostname")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s without a drive: etc/hostname %v, want none", id, err)
		}
		if err := a.Attributes(context.Background(), filepath.Join(t.TempDir(), "attrs")); err != nil {
			t.Errorf("%s without a drive: Attributes() = %v, want nil", id, err)
		}
	}
	root, mounter := driveRoot(t, "cidata", map[string]string{"meta-data": "instance-id: 15a9\n", "user-data": `{"ignition":{"version":"3.4.0"}}`})
	a := newTestAgent(t, "proxmoxve", "http://127.0.0.1:1", root)
	a.d.Mounter = mounter
	if err := a.Hostname(context.Background(), t.TempDir()); err != nil {
		t.Errorf("proxmoxve with a custom user-data: Hostname() = %v, want nil", err)
	}
}
