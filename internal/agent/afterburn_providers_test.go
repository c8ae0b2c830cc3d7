//go:build unix

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flintboot/flint/internal/platform"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// Afterburn's provider names that are no ignition.platform.id
// (coreos/afterburn src/metadata.rs): each reads one source only.
func TestAfterburnOnlyProviders(t *testing.T) {
	ctx := context.Background()
	drive := map[string]string{"openstack/latest/meta_data.json": metaDataJSON}

	t.Run("openstack-metadata asks the service with a drive there", func(t *testing.T) {
		tc := metadataCases["openstack"]
		f := platformtest.NewService(t, tc.routes)
		root, mounter := driveRoot(t, "config-2", drive)
		a := newTestAgent(t, "openstack-metadata", f.URL, root)
		a.d.Mounter = mounter
		m, err := a.fetchMetadata(ctx, "test")
		if err != nil || m.Hostname != tc.wantHostname || !slices.Equal(m.Keys, tc.wantKeys) {
			t.Errorf("openstack-metadata: %q, %q, %v; want %q, %q from the service", m.Hostname, m.Keys, err, tc.wantHostname, tc.wantKeys)
		}
		if len(m.Attrs) != len(tc.wantAttrs) {
			t.Errorf("openstack-metadata attributes = %v, want %q", m.Attrs, tc.wantAttrs)
		}
		if len(mounter.mounts) != 0 {
			t.Errorf("openstack-metadata mounted %v, want no drive read", mounter.mounts)
		}
	})
	t.Run("cloudstack-metadata asks the router with a drive there", func(t *testing.T) {
		tc := metadataCases["cloudstack"]
		f := platformtest.NewService(t, tc.routes)
		root, mounter := driveRoot(t, "config-2", drive)
		a := newTestAgent(t, "cloudstack-metadata", f.URL, root)
		a.d.Mounter = mounter
		m, err := a.fetchMetadata(ctx, "test")
		if err != nil || m.Hostname != tc.wantHostname || len(m.Attrs) != len(tc.wantAttrs) {
			t.Errorf("cloudstack-metadata: %q, %v, %v; want %q and %q", m.Hostname, m.Attrs, err, tc.wantHostname, tc.wantAttrs)
		}
		if len(mounter.mounts) != 0 {
			t.Errorf("cloudstack-metadata mounted %v, want no drive read", mounter.mounts)
		}
	})
	t.Run("cloudstack-configdrive never asks the router", func(t *testing.T) {
		f := platformtest.NewService(t, metadataCases["cloudstack"].routes)
		a := newTestAgent(t, "cloudstack-configdrive", f.URL, t.TempDir())
		if _, err := a.fetchMetadata(ctx, "test"); err == nil {
			t.Errorf("cloudstack-configdrive without a drive = nil, want an error")
		}
		root, mounter := driveRoot(t, "config-2", map[string]string{
			"openstack/latest/meta_data.json":           `{"hostname":"cs-drive","uuid":"0e5f","public_keys":{"k":"ssh-rsa AAAA csd"}}`,
			"cloudstack/metadata/instance-id.txt":       "0e5f",
			"cloudstack/metadata/local-hostname.txt":    "cs-drive",
			"cloudstack/metadata/availability-zone.txt": "zone-1",
		})
		a = newTestAgent(t, "cloudstack-configdrive", f.URL, root)
		a.d.Mounter = mounter
		m, err := a.fetchMetadata(ctx, "test")
		if err != nil || m.Hostname != "cs-drive" || !slices.Equal(m.Keys, []string{"ssh-rsa AAAA csd"}) {
			t.Errorf("cloudstack-configdrive: %q, %q, %v; want cs-drive and its key", m.Hostname, m.Keys, err)
		}
		if n := len(f.Requests()); n != 0 {
			t.Errorf("cloudstack-configdrive made %d router requests, want none", n)
		}
	})
	t.Run("ibmcloud-classic", func(t *testing.T) {
		network := `{"links":[{"id":"interface_1","name":"eth0","ethernet_mac_address":"06:A1:B2:C3:D4:E5"},{"id":"interface_2","name":"eth1","ethernet_mac_address":"06:a1:b2:c3:d4:e6"}],
		  "networks":[{"id":"n0","type":"ipv4","link":"interface_1","ip_address":"10.81.1.5","netmask":"255.255.255.192",
		     "routes":[{"network":"10.0.0.0","netmask":"255.0.0.0","gateway":"10.81.1.1"}]},
		    {"id":"n1","type":"ipv4","link":"interface_2","ip_address":"169.60.1.9","netmask":"255.255.255.240",
		     "routes":[{"network":"0.0.0.0","netmask":"0.0.0.0","gateway":"169.60.1.1"}]},
		    {"id":"n2","type":"ipv4","link":"nowhere","ip_address":"192.0.2.1","netmask":"255.255.255.0","routes":[]}],
		  "services":[{"type":"dns","address":"10.0.80.11"},{"type":"ntp","address":"10.0.77.54"},{"type":"dns","address":"10.0.80.12"}]}`
		root, mounter := driveRoot(t, "config-2", map[string]string{
			"openstack/latest/meta_data.json":    `{"hostname":"ibm-1.example.com","name":"ibm-1","uuid":"a1b2c3","public_keys":{"k":"ssh-rsa AAAA ignored"}}`,
			"openstack/latest/network_data.json": network,
		})
		a := newTestAgent(t, "ibmcloud-classic", "http://127.0.0.1:9", root)
		a.d.Mounter = mounter
		m, err := a.fetchMetadata(ctx, "test")
		if err != nil {
			t.Fatalf("ibmcloud-classic metadata: %v", err)
		}
		wantAttrs := []platform.Attribute{{Name: "IBMCLOUD_CLASSIC_INSTANCE_ID", Value: "a1b2c3"}, {Name: "IBMCLOUD_CLASSIC_LOCAL_HOSTNAME", Value: "ibm-1"}}
		if m.Hostname != "ibm-1" || len(m.Keys) != 0 || !slices.Equal(m.Attrs, wantAttrs) {
			t.Errorf("ibmcloud-classic = %q, %q, %v; want ibm-1, no keys (Afterburn reads none), %v", m.Hostname, m.Keys, m.Attrs, wantAttrs)
		}
		dir := filepath.Join(t.TempDir(), "units")
		if err := a.WriteNetwork(ctx, NetworkdUnits, dir); err != nil {
			t.Fatalf("WriteNetwork(units) = %v", err)
		}
		want := map[string]string{
			"10-eth0.network": "[Match]\nName=eth0\nMACAddress=06:a1:b2:c3:d4:e5\n\n[Network]\nDNS=10.0.80.11\nDNS=10.0.80.12\n\n[Address]\nAddress=10.81.1.5/26\n\n[Route]\nDestination=10.0.0.0/8\nGateway=10.81.1.1\n",
			"10-eth1.network": "[Match]\nName=eth1\nMACAddress=06:a1:b2:c3:d4:e6\n\n[Network]\nDNS=10.0.80.11\nDNS=10.0.80.12\n\n[Address]\nAddress=169.60.1.9/28\n\n[Route]\nDestination=0.0.0.0/0\nGateway=169.60.1.1\n",
		}
		es, _ := os.ReadDir(dir)
		if len(es) != len(want) {
			t.Errorf("units: %d files, want %d", len(es), len(want))
		}
		for name, data := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != data {
				t.Errorf("%s = %q, %v; want\n%s", name, got, err, data)
			}
		}
		if len(mounter.mounts) != 2 || len(mounter.unmount) != 2 {
			t.Errorf("mounts %v, unmounts %v; want one each for the metadata and the network", mounter.mounts, mounter.unmount)
		}

		root, mounter = driveRoot(t, "config-2", map[string]string{"openstack/latest/meta_data.json": `{"name":"","uuid":"a1b2c3"}`})
		a = newTestAgent(t, "ibmcloud-classic", "http://127.0.0.1:9", root)
		a.d.Mounter = mounter
		if _, err := a.fetchMetadata(ctx, "test"); !errors.Is(err, ErrProtocol) {
			t.Errorf("ibmcloud-classic with an empty name = %v, want ErrProtocol", err)
		}
		if err := a.WriteNetwork(ctx, NMKeyfiles, t.TempDir()); err == nil {
			t.Errorf("ibmcloud-classic without network_data.json = nil, want an error")
		}
	})
	if _, ok := platform.Lookup("openstack-metadata"); ok {
		t.Errorf("Lookup(openstack-metadata) found a platform, want it only the agent's")
	}
	for _, p := range platform.AgentOnly() {
		if _, err := New(Deps{}, p.ID); err != nil {
			t.Errorf("New(%s) = %v", p.ID, err)
		}
	}
}

// Proxmox VE's links come from the cidata drive's network-config: its
// networkd units and its netplan document (without version and routes, as
// Afterburn's proxmoxve writes it).
func TestProxmoxVENetworkOutputs(t *testing.T) {
	ctx := context.Background()
	root, mounter := driveRoot(t, "cidata", map[string]string{
		"meta-data":      "instance-id: 9000\n",
		"user-data":      "#cloud-config\nhostname: pve-1\n",
		"network-config": "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: 'bc:24:11:00:00:01'\n    subnets:\n      - type: static\n        address: '192.0.2.7'\n        netmask: '255.255.255.0'\n        gateway: '192.0.2.1'\n  - type: nameserver\n    address: ['192.0.2.53']\n",
	})
	a := newTestAgent(t, "proxmoxve", "http://127.0.0.1:9", root)
	a.d.Mounter = mounter
	dir := t.TempDir()
	if err := a.WriteNetwork(ctx, NetworkdUnits, dir); err != nil {
		t.Fatalf("WriteNetwork(units) = %v", err)
	}
	if err := a.WriteNetwork(ctx, Netplan, dir); err != nil {
		t.Fatalf("WriteNetwork(netplan) = %v", err)
	}
	for name, want := range map[string]string{
		"20-eth0.network":   "[Match]\nName=eth0\nMACAddress=bc:24:11:00:00:01\n\n[Network]\nDNS=192.0.2.53\n\n[Address]\nAddress=192.0.2.7/24\n\n[Route]\nDestination=0.0.0.0/0\nGateway=192.0.2.1\n",
		"50-afterburn.yaml": "network:\n  ethernets:\n    eth0:\n      addresses:\n      - 192.0.2.7/24\n      nameservers:\n        addresses:\n        - 192.0.2.53\n",
	} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want\n%s", name, got, err, want)
		}
	}
	// No drive: nothing, as Afterburn's proxmoxve without one.
	a = newTestAgent(t, "proxmoxve", "http://127.0.0.1:9", t.TempDir())
	empty := t.TempDir()
	if err := a.WriteNetwork(ctx, NMKeyfiles, empty); err != nil {
		t.Errorf("WriteNetwork without a drive = %v, want nothing written", err)
	}
	if es, _ := os.ReadDir(empty); len(es) != 0 {
		t.Errorf("without a drive: %d files, want none", len(es))
	}
}

// Where Afterburn writes no network but the drive describes it
// (OpenStack's network_data.json), flint's agent writes units and
// keyfiles; Afterburn's front end (AfterburnNetwork) writes nothing, and
// netplan is never flint's own.
func TestFlintOnlyNetwork(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"openstack/latest/meta_data.json": metaDataJSON,
		"openstack/latest/network_data.json": `{"links":[{"id":"tap1","name":"ens3","ethernet_mac_address":"FA:16:3E:00:00:01"}],
		  "networks":[{"id":"n1","type":"ipv4","link":"tap1","ip_address":"10.0.0.5","netmask":"255.255.255.0",
		    "routes":[{"network":"0.0.0.0","netmask":"0.0.0.0","gateway":"10.0.0.1"}]}],
		  "services":[{"type":"dns","address":"10.0.0.2"}]}`,
	}
	root, mounter := driveRoot(t, "config-2", files)
	a := newTestAgent(t, "openstack", "http://127.0.0.1:9", root)
	a.d.Mounter = mounter
	dir := t.TempDir()
	if err := a.WriteNetwork(ctx, NMKeyfiles, dir); err != nil {
		t.Fatalf("WriteNetwork(keyfiles) on openstack = %v", err)
	}
	want := "[connection]\nid=ens3\ntype=ethernet\nautoconnect=true\nautoconnect-priority=979\n\n[ethernet]\nmac-address=fa:16:3e:00:00:01\n" +
		"\n[ipv4]\nmethod=manual\naddress1=10.0.0.5/24\ngateway=10.0.0.1\ndns=10.0.0.2;\n\n[ipv6]\nmethod=disabled\n"
	if got, err := os.ReadFile(filepath.Join(dir, "ens3.nmconnection")); err != nil || string(got) != want {
		t.Errorf("ens3.nmconnection = %q, %v; want\n%s", got, err, want)
	}
	if err := a.WriteNetwork(ctx, Netplan, t.TempDir()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("WriteNetwork(netplan) on openstack = %v, want ErrUnsupported", err)
	}
	root, mounter = driveRoot(t, "config-2", files)
	a = newTestAgent(t, "openstack", "http://127.0.0.1:9", root)
	a.d.Mounter, a.d.AfterburnNetwork = mounter, true
	empty := t.TempDir()
	if err := a.WriteNetwork(ctx, NetworkdUnits, empty); !errors.Is(err, ErrUnsupported) {
		t.Errorf("WriteNetwork as Afterburn on openstack = %v, want ErrUnsupported (Afterburn writes none)", err)
	}
	if es, _ := os.ReadDir(empty); len(es) != 0 || len(mounter.mounts) != 0 {
		t.Errorf("as Afterburn: %d files, mounts %v; want none", len(es), mounter.mounts)
	}
}
