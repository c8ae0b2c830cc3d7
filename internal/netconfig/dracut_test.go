package netconfig

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
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
			c, err := Read(readFixture(t, filepath.Join("testdata/kubevirt", tc.file)))
			if err != nil {
				t.Fatalf("Read(%s) = %v", tc.file, err)
			}
			got := KubeVirtKargs(c)
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
		if c, err := Read(readDoc(t, doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Read() = %+v, %v, want ErrInvalid", name, c, err)
		}
	}
}

// TestProxmoxVEKargs feeds the network-config fixtures of Afterburn's
// tests (coreos/afterburn tests/fixtures/proxmoxve/{static,dhcp,
// static-no-gateway}/network-config, asserted in
// src/providers/proxmoxve/tests.rs test_network_kargs*) and wants the
// arguments Afterburn's code builds from them, whole.
func TestProxmoxVEKargs(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"static", "ip=192.168.1.1::192.168.1.254:255.255.255.0:::off " +
			"ip=[2001:db8:85a3::8a2e:370:0]::[2001:db8:85a3::8a2e:370:9999]:24:::off nameserver=1.1.1.1,8.8.8.8 " +
			"ip=192.168.42.1::192.168.42.254:255.255.255.0:::off " +
			"ip=[2001:db8:85a3::8a2e:4242:0]::[2001:db8:85a3::8a2e:4242:9999]:24:::off nameserver=1.1.1.1,8.8.8.8"},
		{"dhcp", "ip=dhcp nameserver=1.1.1.1,8.8.8.8"},
		{"static-no-gateway", "ip=192.168.1.1:::255.255.255.0:::off nameserver=1.1.1.1,8.8.8.8"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := proxmoxVEKargs(readFixture(t, filepath.Join("testdata/proxmoxve", tc.file+".yaml")))
			if err != nil || got != tc.want {
				t.Errorf("ProxmoxVEKargs(%s) = %q, %v\nwant %q", tc.file, got, err, tc.want)
			}
		})
	}
	// What Afterburn cannot turn into interfaces gives no arguments.
	for name, doc := range map[string]string{
		"two nameserver entries": "config:\n- type: nameserver\n  address: [1.1.1.1]\n- type: nameserver\n  address: [8.8.8.8]\n",
		"bad address":            "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n    address: 10.0.0.300\n",
		"static without address": "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n",
	} {
		if got, err := proxmoxVEKargs(readDoc(t, doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: ProxmoxVEKargs() = %q, %v, want ErrInvalid", name, got, err)
		}
	}
	// Host addresses and prefixes.
	tree := readDoc(t, "config:\n- type: physical\n  subnets:\n  - type: static\n    address: 10.1.2.3/16\n  - type: static\n    address: 10.9.9.9\n  - type: dhcp6\n")
	want := "ip=10.1.2.3:::255.255.0.0:::off ip=10.9.9.9:::255.255.255.255:::off ip=dhcp6"
	if got, err := proxmoxVEKargs(tree); err != nil || got != want {
		t.Errorf("ProxmoxVEKargs() = %q, %v, want %q", got, err, want)
	}
}

// proxmoxVEKargs reads a description and projects it, as platform's
// Proxmox VE provider does: a description that does not read is an
// error like one the projection refuses.
func proxmoxVEKargs(tree any) (string, error) {
	c, err := Read(tree)
	if err != nil {
		return "", err
	}
	return ProxmoxVEKargs(c)
}
