package platform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubeVirtKargs feeds the fixtures of Afterburn's kubevirt tests
// (coreos/afterburn tests/fixtures/kubevirt/*, the network_data.json and
// network-config files) and checks what src/providers/kubevirt/tests.rs
// asserts of the arguments (test_network_data,
// assert_dhcp_with_static_gw_and_dns, assert_no_duplicate_routes): the
// same arguments, as many, and no gateway a route replaced.
func TestKubeVirtKargs(t *testing.T) {
	full := []string{
		"ip=192.168.1.10:::255.255.255.0::eth0:static",
		"ip=[2001:db8::10]:::64::eth0:static",
		"ip=eth1:dhcp,dhcp6",
		"rd.route=0.0.0.0/0:192.168.1.1",
		"rd.route=[::/0]:[2001:db8::1]",
		"nameserver=8.8.8.8",
		"nameserver=8.8.4.4",
		"nameserver=[2001:4860:4860::8888]",
		"nameserver=[2001:4860:4860::8844]",
	}
	dhcpGW := []string{"ip=eth0:dhcp,dhcp6", "rd.route=0.0.0.0/0:192.168.1.1", "rd.route=[::/0]:[2001:db8::1]", "nameserver=8.8.8.8", "nameserver=8.8.4.4"}
	for _, tc := range []struct {
		file    string
		want    []string
		parts   int      // 0: not asserted upstream
		oneOf   []string // one of these too
		without []string
	}{
		{"config_drive.json", full, 10, []string{"ip=06:aa:bb:cc:dd:02:dhcp", "ip=eth2:dhcp"}, nil},
		{"nocloud_v1.yaml", full, 10, []string{"ip=06:aa:bb:cc:dd:02:dhcp", "ip=eth2:dhcp"}, nil},
		{"nocloud_v1_json.yaml", full, 10, []string{"ip=06:aa:bb:cc:dd:02:dhcp", "ip=eth2:dhcp"}, nil},
		{"nocloud_v2.yaml", full, 10, []string{"ip=06:aa:bb:cc:dd:02:dhcp", "ip=eth2:dhcp"}, nil},
		{"dhcp_static_gw_dns.json", dhcpGW, 5, nil, nil},
		{"dhcp_static_gw_dns_nocloud_v1.yaml", dhcpGW, 5, nil, nil},
		{"dhcp_static_gw_dns_nocloud_v2.yaml", dhcpGW, 5, nil, nil},
		{"gateway_and_routes_nocloud_v1.yaml", dhcpGW[:3], 0, nil, []string{"192.168.1.2", "2001:db8::2"}},
		{"gateway_and_routes_nocloud_v2.yaml", dhcpGW[:3], 0, nil, []string{"192.168.1.2", "2001:db8::2"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/kubevirt-netkargs", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := readYAMLTree(data)
			if err != nil {
				t.Fatal(err)
			}
			var ifaces []kvIface
			if strings.HasSuffix(tc.file, ".json") {
				ifaces, err = kubeVirtConfigDriveIfaces(tree)
			} else {
				ifaces, err = kubeVirtNoCloudIfaces(tree)
			}
			if err != nil {
				t.Fatalf("interfaces: %v", err)
			}
			got := kubeVirtKargs(ifaces)
			parts := strings.Fields(got)
			if tc.parts != 0 && len(parts) != tc.parts {
				t.Errorf("%d arguments, want %d: %q", len(parts), tc.parts, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in %q", w, got)
				}
			}
			if tc.oneOf != nil && !strings.Contains(got, tc.oneOf[0]) && !strings.Contains(got, tc.oneOf[1]) {
				t.Errorf("neither %q in %q", tc.oneOf, got)
			}
			for _, w := range tc.without {
				if strings.Contains(got, w) {
					t.Errorf("%q in %q, want the route's gateway only", w, got)
				}
			}
		})
	}
	// What Afterburn refuses is an error.
	for name, doc := range map[string]string{
		"bad address":        "version: 2\nethernets:\n  eth0:\n    addresses: [10.0.0.300/24]\n",
		"bad netmask":        "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n    address: 10.0.0.2\n    netmask: 255.0.255.0\n",
		"route without mask": "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: dhcp\n    routes:\n    - network: 10.0.0.0\n      gateway: 10.0.0.1\n",
	} {
		tree, err := readYAMLTree([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if ifaces, err := kubeVirtNoCloudIfaces(tree); err == nil {
			t.Errorf("%s: interfaces = %+v, want an error", name, ifaces)
		}
	}
}

// TestKubeVirtNetworkKargs: the config-2 drive wins over the cidata
// drive, both found without /dev/disk/by-label; virtio_blk is loaded only
// when its driver is missing.
func TestKubeVirtNetworkKargs(t *testing.T) {
	netData, _ := os.ReadFile("testdata/kubevirt-netkargs/dhcp_static_gw_dns.json")
	netCfg, _ := os.ReadFile("testdata/kubevirt-netkargs/nocloud_v2.yaml")
	setup := func(t *testing.T, drives map[string]string, files map[string]map[string]string, driver bool) (Env, *driveMounter, *fakeRunner) {
		root := t.TempDir()
		m := newDriveMounter()
		os.MkdirAll(filepath.Join(root, "dev"), 0o755)
		for name, label := range drives {
			os.MkdirAll(filepath.Join(root, "sys/class/block", name), 0o755)
			if err := os.WriteFile(filepath.Join(root, "dev", name), isoWithLabel(label), 0o644); err != nil {
				t.Fatal(err)
			}
			tree := t.TempDir()
			for p, c := range files[name] {
				os.MkdirAll(filepath.Dir(filepath.Join(tree, p)), 0o755)
				os.WriteFile(filepath.Join(tree, p), []byte(c), 0o644)
			}
			m.trees[filepath.Join(root, "dev", name)] = tree
		}
		if driver {
			os.MkdirAll(filepath.Join(root, "sys/bus/virtio/drivers/virtio_blk"), 0o755)
		}
		r := &fakeRunner{}
		return Env{Root: root, Mounter: m, Runner: r, Logger: localTestLogger(t), Wait: 300 * time.Millisecond}, m, r
	}
	both := map[string]map[string]string{
		"vdb": {"openstack/latest/network_data.json": string(netData)},
		"vdc": {"network-config": string(netCfg), "meta-data": "instance-id: 1\n"},
	}
	env, m, r := setup(t, map[string]string{"vdb": "config-2", "vdc": "cidata"}, both, false)
	got, ok, err := newKubeVirt(env).(kubevirtProvider).NetworkKargs(context.Background())
	if err != nil || !ok || !strings.HasPrefix(got, "ip=eth0:dhcp,dhcp6 ") {
		t.Errorf("NetworkKargs() = %q, %v, %v; want the config-2 drive's", got, ok, err)
	}
	m.checkClean(t)
	if l := r.lines(); len(l) != 1 || l[0] != "modprobe virtio_blk" {
		t.Errorf("commands = %q, want modprobe virtio_blk", l)
	}

	env, _, r = setup(t, map[string]string{"vdc": "cidata"}, both, true)
	got, ok, err = newKubeVirt(env).(kubevirtProvider).NetworkKargs(context.Background())
	if err != nil || !ok || !strings.Contains(got, "ip=192.168.1.10:::255.255.255.0::eth0:static") {
		t.Errorf("NetworkKargs() from cidata = %q, %v, %v", got, ok, err)
	}
	if l := r.lines(); len(l) != 0 {
		t.Errorf("commands = %q with the driver there, want none", l)
	}

	env, _, _ = setup(t, map[string]string{"vda": "root"}, nil, true)
	if got, ok, err := newKubeVirt(env).(kubevirtProvider).NetworkKargs(context.Background()); err != nil || ok {
		t.Errorf("NetworkKargs() without a drive = %q, %v, %v; want nothing", got, ok, err)
	}
	env, _, _ = setup(t, map[string]string{"vdc": "cidata"}, map[string]map[string]string{"vdc": {"network-config": "version: 2\nethernets:\n  eth0:\n    addresses: [bad]\n"}}, true)
	if _, _, err := newKubeVirt(env).(kubevirtProvider).NetworkKargs(context.Background()); err == nil {
		t.Errorf("NetworkKargs() with a bad address = nil error, want one")
	}
}
