package platform

import (
	"context"
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
