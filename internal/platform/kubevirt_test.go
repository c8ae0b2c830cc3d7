package platform

import (
	"context"
	"errors"
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
