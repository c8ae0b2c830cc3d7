package platform

import (
	"context"
	"errors"
	"testing"
	"time"
)

const localUserData = `{"ignition":{"version":"3.4.0"}}`

func TestIBMCloud(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string // nil: no drive
		mountErr error
		want     string
		wantErr  error
	}{
		{name: "user-data", files: map[string]string{"user-data": localUserData, "meta-data": "{}"}, want: localUserData},
		{name: "no user-data", files: map[string]string{"meta-data": "{}"}, wantErr: ErrNoConfig},
		{name: "no drive in time", wantErr: ErrNoConfig},
		{name: "mount fails", files: map[string]string{"user-data": localUserData}, mountErr: errFakeMount, wantErr: errFakeMount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			m.mountErr = tt.mountErr
			if tt.files != nil {
				writeDrive(t, root, m, "sr0", "cidata", "iso9660", tt.files)
			}
			env := Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 100 * time.Millisecond}
			got, err := newIBMCloud(env).FetchConfig(context.Background())
			checkLocal(t, "ibmcloud", got, err, tt.want, tt.wantErr)
			if tt.mountErr != nil && errors.Is(err, ErrNoConfig) {
				t.Errorf("a mount failure must fail, not be an empty config: %v", err)
			}
			m.checkClean(t)
		})
	}
}
