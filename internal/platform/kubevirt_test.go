package platform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKubeVirt(t *testing.T) {
	type drive struct {
		label string
		files map[string]string
	}
	tests := []struct {
		name    string
		drives  []drive
		later   *drive
		want    string
		wantErr error
	}{
		{
			name:   "nocloud",
			drives: []drive{{"cidata", map[string]string{"user-data": localUserData, "meta-data": "instance-id: x"}}},
			want:   localUserData,
		},
		{
			name:   "configdrive",
			drives: []drive{{"config-2", map[string]string{"openstack/latest/user_data": localUserData}}},
			want:   localUserData,
		},
		{
			name:    "configdrive without user_data",
			drives:  []drive{{"config-2", map[string]string{"openstack/latest/meta_data.json": "{}"}}},
			wantErr: ErrNoConfig,
		},
		{
			name:    "nocloud without user-data",
			drives:  []drive{{"cidata", map[string]string{"meta-data": "instance-id: x"}}},
			wantErr: ErrNoConfig,
		},
		{
			name:  "drive appears later",
			later: &drive{"config-2", map[string]string{"openstack/latest/user_data": localUserData}},
			want:  localUserData,
		},
		{
			name:    "no drive",
			wantErr: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			for i, d := range tt.drives {
				writeDrive(t, root, m, "vd"+string(rune('b'+i)), d.label, "iso9660", d.files)
			}
			linked := make(chan error, 1)
			if d := tt.later; d != nil {
				stageDrive(t, root, m, "sr0", d.label, "iso9660", d.files)
				go func() {
					time.Sleep(100 * time.Millisecond)
					linked <- linkLabel(root, "sr0", d.label)
				}()
			} else {
				linked <- nil
			}
			// No Env.Wait: KubeVirt waits as long as the context lets it.
			timeout := 3 * time.Second
			if errors.Is(tt.wantErr, context.DeadlineExceeded) {
				timeout = 200 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			got, err := newKubeVirt(Env{Root: root, Mounter: m, Logger: localTestLogger(t)}).FetchConfig(ctx)
			if err := <-linked; err != nil {
				t.Fatal(err)
			}
			checkLocal(t, "kubevirt", got, err, tt.want, tt.wantErr)
			if errors.Is(tt.wantErr, context.DeadlineExceeded) && errors.Is(err, ErrNoConfig) {
				t.Errorf("no drive at all must not be an empty config: %v", err)
			}
			m.checkClean(t)
		})
	}
}

// TestKubeVirtNetworkKargs: the config-2 drive wins over the cidata
// drive, both found without /dev/disk/by-label; virtio_blk is loaded only
// when its driver is missing.
func TestKubeVirtNetworkKargs(t *testing.T) {
	netData, _ := os.ReadFile("../netconfig/testdata/kubevirt/dhcp_static_gw_dns.json")
	netCfg, _ := os.ReadFile("../netconfig/testdata/kubevirt/nocloud_v2.yaml")
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
