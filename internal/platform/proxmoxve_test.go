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

func TestProxmoxVE(t *testing.T) {
	const (
		cloudConfig = "#cloud-config\nhostname: pve\n"
		vendorCfg   = `{"ignition":{"version":"3.5.0"}}`
	)
	tests := []struct {
		name    string
		files   map[string]string // nil: no drive
		want    string
		wantErr error
	}{
		{name: "user-data", files: map[string]string{"user-data": localUserData, "vendor-data": vendorCfg}, want: localUserData},
		{name: "cloud-config user-data, vendor-data", files: map[string]string{"user-data": cloudConfig, "vendor-data": vendorCfg}, want: vendorCfg},
		{name: "empty user-data, vendor-data", files: map[string]string{"user-data": "", "vendor-data": vendorCfg}, want: vendorCfg},
		{name: "no user-data, vendor-data", files: map[string]string{"meta-data": "instance-id: 1", "vendor-data": vendorCfg}, want: vendorCfg},
		// Anything else is the config, as Ignition takes it
		// (coreos/ignition internal/providers/proxmoxve/proxmoxve.go):
		// a script or YAML by mistake reaches the parser, which fails the
		// boot with its error, instead of booting without the config.
		{name: "script user-data", files: map[string]string{"user-data": "#!/bin/sh\necho hi\n", "vendor-data": vendorCfg}, want: "#!/bin/sh\necho hi\n"},
		{name: "Butane YAML user-data", files: map[string]string{"user-data": "variant: fcos\nversion: 1.5.0\n"}, want: "variant: fcos\nversion: 1.5.0\n"},
		{name: "both cloud-config", files: map[string]string{"user-data": cloudConfig, "vendor-data": "#cloud-config\n"}, wantErr: ErrNoConfig},
		{name: "no files", files: map[string]string{"meta-data": "instance-id: 1"}, wantErr: ErrNoConfig},
		// A broken Ignition config is returned for the parser to report.
		{name: "broken JSON is not skipped", files: map[string]string{"user-data": `{"ignition": `, "vendor-data": vendorCfg}, want: `{"ignition": `},
		{name: "no drive in time", wantErr: ErrNoConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			if tt.files != nil {
				writeDrive(t, root, m, "sr1", "cidata", "iso9660", tt.files)
			}
			env := Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 100 * time.Millisecond}
			got, err := newProxmoxVE(env).FetchConfig(context.Background())
			checkLocal(t, "proxmoxve", got, err, tt.want, tt.wantErr)
			if tt.files != nil && len(m.mounts) != 1 {
				t.Errorf("mounted %d times, want once for both files", len(m.mounts))
			}
			m.checkClean(t)
		})
	}
}

func TestNotIgnition(t *testing.T) {
	tests := []struct {
		data string
		skip bool
	}{
		{"", true},
		{"#cloud-config\n", true},
		{"#cloud-config", true},
		{"#cloud-config\r\nusers: []", true},
		{"\xef\xbb\xbf#cloud-config\n", true},
		// Only those: the rest is for the parser to judge.
		{" \n\t", false},
		{"#!/bin/bash\n", false},
		{"#include\nhttp://x\n", false},
		{"#cloud-configuration\n", false},
		{"Content-Type: multipart/mixed; boundary=x\n", false},
		{"\x1f\x8b\x08\x00", false},
		{"[1, 2]", false},
		{`{"ignition":{}}`, false},
		{"\n  {\"ignition\":{}}", false},
		{"\xef\xbb\xbf{}", false},
		{"{broken", false},
	}
	for _, tt := range tests {
		if got := notIgnition([]byte(tt.data)); (got != "") != tt.skip {
			t.Errorf("notIgnition(%q) = %q, want skip %v", tt.data, got, tt.skip)
		}
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
	netcfg, err := os.ReadFile("../netconfig/testdata/proxmoxve/dhcp.yaml")
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
