package platform

import (
	"context"
	"testing"
	"time"
)

// TestConfigDriveAlwaysAttached covers Nutanix and PowerVS: the config-2
// drive, waited for without a limit of its own.
func TestConfigDriveAlwaysAttached(t *testing.T) {
	platforms := []struct {
		id  string
		new func(Env) Provider
	}{
		{"nutanix", newNutanix},
		{"powervs", newPowerVS},
	}
	tests := []struct {
		name    string
		label   string
		files   map[string]string // nil: no drive
		want    string
		wantErr error
	}{
		{name: "user_data", label: "config-2", files: map[string]string{"openstack/latest/user_data": localUserData}, want: localUserData},
		{name: "no user_data", label: "config-2", files: map[string]string{"openstack/latest/meta_data.json": "{}"}, wantErr: ErrNoConfig},
		{name: "empty user_data", label: "config-2", files: map[string]string{"openstack/latest/user_data": ""}, wantErr: ErrNoConfig},
		{name: "waits until the context ends", wantErr: context.DeadlineExceeded},
		{name: "upper-case label is not theirs", label: "CONFIG-2", files: map[string]string{"openstack/latest/user_data": localUserData}, wantErr: context.DeadlineExceeded},
	}
	for _, p := range platforms {
		for _, tt := range tests {
			t.Run(p.id+"/"+tt.name, func(t *testing.T) {
				root := t.TempDir()
				m := newDriveMounter()
				if tt.files != nil {
					writeDrive(t, root, m, "sr0", tt.label, "iso9660", tt.files)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				got, err := p.new(Env{Root: root, Mounter: m, Logger: localTestLogger(t)}).FetchConfig(ctx)
				checkLocal(t, p.id, got, err, tt.want, tt.wantErr)
				m.checkClean(t)
			})
		}
	}
}
