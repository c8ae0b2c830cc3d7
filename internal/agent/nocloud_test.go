package agent

import (
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

// IBM Cloud's drive as the peer's fixture has it: MIME vendor-data whose
// first text/cloud-config part holds the keys, folded over two lines.
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

func TestNoCloudMetadata(t *testing.T) {
	for _, c := range []struct {
		id, label string
		files     map[string]string
		hostname  string
		keys      []string
		attrs     []attribute
	}{
		{"ibmcloud", "cidata", map[string]string{
			"meta-data":      "instance-id: 0717_2a588fe2-7da2-4321\nlocal-hostname: vsi-1\n",
			"user-data":      `{"ignition":{"version":"3.4.0"}}`,
			"vendor-data":    ibmVendorData,
			"network-config": "version: 1\nconfig: []\n",
		}, "vsi-1", []string{"ssh-rsa AAAAB3NzaC1yc2 3TIX+eesnqasq9w== testuser@test.com", "ssh-ed25519 AAAAC3Nza testuser2@test.com"},
			[]attribute{{"IBMCLOUD_INSTANCE_ID", "0717_2a588fe2-7da2-4321"}, {"IBMCLOUD_LOCAL_HOSTNAME", "vsi-1"}}},
		{"proxmoxve", "cidata", map[string]string{
			"meta-data":      "instance-id: 15a9919cb91024fbd1d70fa07f0efa749cbba03b\n",
			"user-data":      proxmoxUserData,
			"vendor-data":    "",
			"network-config": proxmoxNetworkConfig,
		}, "pve-vm", []string{"ssh-rsa AAAAB3Nza dummy@dummy.local", "ssh-ed25519 AAAAC3 second"},
			[]attribute{{"PROXMOXVE_INSTANCE_ID", "15a9919cb91024fbd1d70fa07f0efa749cbba03b"}, {"PROXMOXVE_HOSTNAME", "pve-vm"}}},
		// A custom user-data holding the Ignition config: no keys, no hostname.
		{"proxmoxve", "cidata", map[string]string{
			"meta-data":      "instance-id: 15a9\n",
			"user-data":      `{"ignition":{"version":"3.4.0"}}`,
			"network-config": proxmoxNetworkConfig,
		}, "", nil, []attribute{{"PROXMOXVE_INSTANCE_ID", "15a9"}}},
		// KubeVirt writes its NoCloud meta-data as JSON.
		{"kubevirt", "cidata", map[string]string{
			"meta-data": `{"instance-type":"u1.small","instance-id":"5d307ca9-b3ef","local-hostname":"vm-nc","public-keys":{"1":"ssh-rsa BBBB two","0":"ssh-ed25519 AAAA one"}}`,
			"user-data": `{"ignition":{"version":"3.4.0"}}`,
		}, "vm-nc", []string{"ssh-ed25519 AAAA one", "ssh-rsa BBBB two"},
			[]attribute{{"KUBEVIRT_HOSTNAME", "vm-nc"}, {"KUBEVIRT_INSTANCE_ID", "5d307ca9-b3ef"}, {"KUBEVIRT_INSTANCE_TYPE", "u1.small"}}},
		{"kubevirt", "config-2", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}, "vm-1.novalocal",
			[]string{"ssh-ed25519 AAAA alpha", "ssh-rsa ZZZZ zeta"},
			[]attribute{{"KUBEVIRT_HOSTNAME", "vm-1.novalocal"}, {"KUBEVIRT_INSTANCE_ID", "83679162-1378-4288-a2d4-70e13ec132aa"}, {"KUBEVIRT_AVAILABILITY_ZONE", "nova"}}},
	} {
		t.Run(c.id+"/"+c.label, func(t *testing.T) {
			root, mounter := driveRoot(t, c.label, c.files)
			a := newTestAgent(t, c.id, "http://127.0.0.1:1", root)
			a.d.Mounter = mounter
			m, err := a.fetchMetadata(context.Background(), "test")
			if err != nil {
				t.Fatalf("metadata: %v", err)
			}
			if m.hostname != c.hostname || !slices.Equal(m.keys, c.keys) || !slices.Equal(m.attrs, c.attrs) {
				t.Errorf("hostname %q, keys %q, attributes %v;\nwant %q, %q, %v", m.hostname, m.keys, m.attrs, c.hostname, c.keys, c.attrs)
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
	}{
		{"no meta-data", "ibmcloud", map[string]string{"user-data": "{}"}, "meta-data is missing"},
		{"meta-data a list", "proxmoxve", map[string]string{"meta-data": "- instance-id: x\n"}, "line 1: not a top-level key"},
		{"nested hostname", "ibmcloud", map[string]string{"meta-data": "instance-id: x\nlocal-hostname:\n  name: h\n"}, `key "local-hostname"`},
		{"key in a mapping list", "proxmoxve", map[string]string{"meta-data": "instance-id: x\n", "user-data": "#cloud-config\nssh_authorized_keys:\n  - name: k\n    password: $5$secret\n"}, "line 3: a mapping in the list"},
		{"anchor", "proxmoxve", map[string]string{"meta-data": "instance-id: x\n", "user-data": "#cloud-config\nhostname: &h pve\n"}, "anchor"},
		{"broken JSON", "kubevirt", map[string]string{"meta-data": `{"instance-id": 42`}, "meta-data"},
		{"encoded cloud-config part", "ibmcloud", map[string]string{"meta-data": "instance-id: x\n", "vendor-data": "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\nContent-Transfer-Encoding: quoted-printable\n\n#cloud-config\nssh_authorized_keys:\n- ssh-rsa A=3D\n--b--\n"}, "transfer encoding"},
		{"unterminated MIME", "ibmcloud", map[string]string{"meta-data": "instance-id: x\n", "vendor-data": "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\n\n#cloud-config\nssh_authorized_keys:\n- ssh-rsa A\n"}, "closing boundary"},
		{"vendor-data not MIME", "ibmcloud", map[string]string{"meta-data": "instance-id: x\n", "vendor-data": "echo hi\n"}, "not #cloud-config nor MIME"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, mounter := driveRoot(t, "cidata", c.files)
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
	// No drive at all.
	for _, id := range []string{"ibmcloud", "proxmoxve", "kubevirt"} {
		a := newTestAgent(t, id, "http://127.0.0.1:1", t.TempDir())
		if _, err := a.fetchMetadata(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), "no config drive appeared") {
			t.Errorf("%s without a drive: %v, want an error naming the drive", id, err)
		}
	}
}
