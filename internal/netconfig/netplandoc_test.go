package netconfig

import (
	"strings"
	"testing"
)

// TestNetplanFromMetadata: Afterburn's own cases (src/providers/vmware/
// amd64.rs tests, the example of docs/usage/vmware-netplan-guestinfo-
// metadata.md) and serde_yaml's value model and styles.
func TestNetplanFromMetadata(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"json, other keys dropped", `{"network": {"ethernets": {"nics": {"match": {"name": "ens*"}}}}, "ExcludeNonNetplanField": 0}`,
			"network:\n  ethernets:\n    nics:\n      match:\n        name: ens*\n"},
		{"yaml unchanged", "network:\n  ethernets:\n    nics:\n      match:\n        name: ens*\n",
			"network:\n  ethernets:\n    nics:\n      match:\n        name: ens*\n"},
		{"documented example: keys sorted, yes a string", "network:\n  version: 2\n  ethernets:\n    nics:\n      match:\n        name: ens*\n      dhcp4: yes\n",
			"network:\n  ethernets:\n    nics:\n      dhcp4: yes\n      match:\n        name: ens*\n  version: 2\n"},
		{"static: sequences unindented, numbers and bools",
			"instance-id: x\nnetwork:\n  version: 2\n  ethernets:\n    ens192:\n      addresses: [192.168.1.10/24, 'fe80::10/64']\n      gateway4: 192.168.1.1\n      dhcp4: false\n      mtu: 0x5dc\n      nameservers:\n        addresses: [\"8.8.8.8\"]\n        search: []\n      routes:\n      - to: default\n        via: 192.168.1.1\n        metric: 1.50\n",
			"network:\n  ethernets:\n    ens192:\n      addresses:\n      - 192.168.1.10/24\n      - fe80::10/64\n      dhcp4: false\n      gateway4: 192.168.1.1\n      mtu: 1500\n      nameservers:\n        addresses:\n        - 8.8.8.8\n        search: []\n      routes:\n      - metric: 1.5\n        to: default\n        via: 192.168.1.1\n  version: 2\n"},
		{"strings that read as other types are quoted", `{"network": {"a": "true", "b": "2", "c": "", "d": "0123", "e": "1e3", "f": null, "g": {}, "h": "x: y", "i": 1e300, "j": 100000000000000000000, "k": 0.0001}}`,
			"network:\n  a: 'true'\n  b: '2'\n  c: ''\n  d: '0123'\n  e: '1e3'\n  f: null\n  g: {}\n  h: 'x: y'\n  i: 1e300\n  j: 1e20\n  k: 0.0001\n"},
		{"aliases expanded", "common: &c {dhcp4: true}\nnetwork:\n  ethernets:\n    eth0: *c\n",
			"network:\n  ethernets:\n    eth0:\n      dhcp4: true\n"},
	} {
		got, err := NetplanFromMetadata([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("NetplanFromMetadata(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"hello: world\n", "no 'network' key found"},
		{"- network\n", "no 'network' key found"},
		{"network: [\n", "invalid YAML/JSON metadata"},
	} {
		if _, err := NetplanFromMetadata([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NetplanFromMetadata(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestRyu(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 1.5: "1.5", 1e15: "1000000000000000.0", 1e16: "1e16", 1.234e33: "1.234e33", 0.001234: "0.001234", 1.5e-7: "1.5e-7", -2.5: "-2.5", 123456.789: "123456.789"} {
		if got := ryu(f); got != want {
			t.Errorf("ryu(%v) = %q, want %q", f, got, want)
		}
	}
}
