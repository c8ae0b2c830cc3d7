package platform

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProxmoxKargs feeds the network-config fixtures of Afterburn's
// tests (coreos/afterburn tests/fixtures/proxmoxve/{static,dhcp,
// static-no-gateway}/network-config, asserted in
// src/providers/proxmoxve/tests.rs test_network_kargs*) and wants the
// arguments Afterburn's code builds from them, whole.
func TestProxmoxKargs(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"static", "ip=192.168.1.1::192.168.1.254:255.255.255.0:::off " +
			"ip=[2001:db8:85a3::8a2e:370:0]::[2001:db8:85a3::8a2e:370:9999]:24:::off nameserver=1.1.1.1,8.8.8.8 " +
			"ip=192.168.42.1::192.168.42.254:255.255.255.0:::off " +
			"ip=[2001:db8:85a3::8a2e:4242:0]::[2001:db8:85a3::8a2e:4242:9999]:24:::off nameserver=1.1.1.1,8.8.8.8"},
		{"dhcp", "ip=dhcp nameserver=1.1.1.1,8.8.8.8"},
		{"static-no-gateway", "ip=192.168.1.1:::255.255.255.0:::off nameserver=1.1.1.1,8.8.8.8"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/proxmoxve-netkargs", tc.file+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := readYAMLTree(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := proxmoxKargs(tree)
			if err != nil || got != tc.want {
				t.Errorf("proxmoxKargs(%s) = %q, %v\nwant %q", tc.file, got, err, tc.want)
			}
		})
	}
	// What Afterburn cannot turn into interfaces gives no arguments.
	for name, doc := range map[string]string{
		"two nameserver entries": "config:\n- type: nameserver\n  address: [1.1.1.1]\n- type: nameserver\n  address: [8.8.8.8]\n",
		"bad address":            "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n    address: 10.0.0.300\n",
		"static without address": "config:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n",
	} {
		tree, err := readYAMLTree([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := proxmoxKargs(tree); err == nil {
			t.Errorf("%s: proxmoxKargs() = %q, want an error", name, got)
		}
	}
	// Host addresses and prefixes.
	tree, _ := readYAMLTree([]byte("config:\n- type: physical\n  subnets:\n  - type: static\n    address: 10.1.2.3/16\n  - type: static\n    address: 10.9.9.9\n  - type: dhcp6\n"))
	want := "ip=10.1.2.3:::255.255.0.0:::off ip=10.9.9.9:::255.255.255.255:::off ip=dhcp6"
	if got, err := proxmoxKargs(tree); err != nil || got != want {
		t.Errorf("proxmoxKargs() = %q, %v, want %q", got, err, want)
	}
}

// isoWithLabel is the start of an ISO 9660 image whose primary volume
// descriptor names label.
func isoWithLabel(label string) []byte {
	img := make([]byte, vrsStart+4096)
	img[vrsStart] = 1
	copy(img[vrsStart+1:], "CD001")
	img[vrsStart+6] = 1
	copy(img[vrsStart+40:vrsStart+72], label+strings.Repeat(" ", 32-len(label)))
	img[vrsStart+2048] = 255
	copy(img[vrsStart+2049:], "CD001")
	return img
}

// fatWithLabel is a FAT boot sector (FAT32 when fat32) labelled label.
func fatWithLabel(label string, fat32 bool) []byte {
	img := make([]byte, 4096)
	img[0], img[510], img[511] = 0xEB, 0x55, 0xAA
	off, fs, fsOff := 43, "FAT16   ", 54
	if fat32 {
		off, fs, fsOff = 71, "FAT32   ", 82
	}
	copy(img[off:off+11], label+strings.Repeat(" ", 11-len(label)))
	copy(img[fsOff:], fs)
	return img
}

func TestVolumeLabel(t *testing.T) {
	for _, tc := range []struct {
		name string
		img  []byte
		want string
	}{
		{"iso9660", isoWithLabel("cidata"), "cidata"},
		{"fat16", fatWithLabel("CIDATA", false), "CIDATA"},
		{"fat32", fatWithLabel("cidata", true), "cidata"},
		{"fat without a label", fatWithLabel("NO NAME", true), ""},
		{"neither", make([]byte, 64<<10), ""},
		{"short", []byte("x"), ""},
	} {
		if got := volumeLabel(bytes.NewReader(tc.img)); got != tc.want {
			t.Errorf("volumeLabel(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestProxmoxNetworkKargs: the cidata drive is found among the block
// devices without /dev/disk/by-label (udev has not run), mounted
// read-only, and its network-config gives the arguments.
func TestProxmoxNetworkKargs(t *testing.T) {
	netcfg, err := os.ReadFile("testdata/proxmoxve-netkargs/dhcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	setup := func(t *testing.T, files map[string]string, label string) (Env, *driveMounter) {
		root := t.TempDir()
		m := newDriveMounter()
		for name, img := range map[string][]byte{"sda": make([]byte, 64<<10), "sr0": isoWithLabel(label)} {
			os.MkdirAll(filepath.Join(root, "sys/class/block", name), 0o755)
			os.MkdirAll(filepath.Join(root, "dev"), 0o755)
			if err := os.WriteFile(filepath.Join(root, "dev", name), img, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tree := t.TempDir()
		for p, c := range files {
			os.WriteFile(filepath.Join(tree, p), []byte(c), 0o644)
		}
		m.trees[filepath.Join(root, "dev/sr0")] = tree
		return Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 300 * time.Millisecond}, m
	}

	env, m := setup(t, map[string]string{"meta-data": "instance-id: 1\n", "network-config": string(netcfg)}, "cidata")
	if _, err := os.Stat(filepath.Join(env.Root, "dev/disk/by-label")); !os.IsNotExist(err) {
		t.Fatalf("the test root has by-label links: %v", err)
	}
	kargs, ok, err := newProxmoxVE(env).(proxmoxProvider).NetworkKargs(context.Background())
	if err != nil || !ok || kargs != "ip=dhcp nameserver=1.1.1.1,8.8.8.8" {
		t.Errorf("NetworkKargs() = %q, %v, %v; want the dhcp fixture's arguments", kargs, ok, err)
	}
	m.checkClean(t)

	// No network-config, or no cidata drive: nothing, and no error.
	env, _ = setup(t, map[string]string{"meta-data": "instance-id: 1\n"}, "cidata")
	if kargs, ok, err := newProxmoxVE(env).(proxmoxProvider).NetworkKargs(context.Background()); err != nil || ok {
		t.Errorf("NetworkKargs() without network-config = %q, %v, %v; want nothing", kargs, ok, err)
	}
	env, m = setup(t, map[string]string{"network-config": string(netcfg)}, "other")
	if kargs, ok, err := newProxmoxVE(env).(proxmoxProvider).NetworkKargs(context.Background()); err != nil || ok {
		t.Errorf("NetworkKargs() without a cidata drive = %q, %v, %v; want nothing", kargs, ok, err)
	}
	if len(m.mounts) != 0 {
		t.Errorf("mounted %v, want no mount without a cidata drive", m.mounts)
	}
	// A network-config that is not YAML is an error.
	env, _ = setup(t, map[string]string{"network-config": "config: [\n"}, "cidata")
	if _, _, err := newProxmoxVE(env).(proxmoxProvider).NetworkKargs(context.Background()); err == nil {
		t.Errorf("NetworkKargs() with a broken network-config = nil error, want one")
	}
}
