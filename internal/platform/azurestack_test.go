package platform

import (
	"context"
	"testing"
	"time"
)

func TestAzureStack(t *testing.T) {
	tests := []struct {
		name    string
		fstype  string
		files   map[string]string // nil: no drive
		want    string
		wantErr error
	}{
		{name: "iso9660 with custom data", fstype: "iso9660", files: map[string]string{"ovf-env.xml": "<Environment/>", "CustomData.bin": localUserData}, want: localUserData},
		{name: "udf with custom data", fstype: "udf", files: map[string]string{"ovf-env.xml": "<Environment/>", "CustomData.bin": localUserData}, want: localUserData},
		{name: "no custom data", fstype: "udf", files: map[string]string{"ovf-env.xml": "<Environment/>"}, wantErr: ErrNoConfig},
		{name: "no media", wantErr: errNoDrive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			cds := newFakeCDROMs()
			if tt.files != nil {
				writeDrive(t, root, m, "sr0", "", tt.fstype, tt.files)
				cds.set("sr0", cdsDiscOK)
			}
			env := Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 100 * time.Millisecond}
			p := newAzureStack(env).(azurestackProvider)
			p.status = cds.driveStatus
			got, err := p.FetchConfig(context.Background())
			checkLocal(t, "azurestack", got, err, tt.want, tt.wantErr)
			m.checkClean(t)
		})
	}
}

// TestAzureStackRealIoctl runs the provider with the real drive status
// ioctl on a fake /dev/sr0 (a regular file): the ioctl fails, so the file
// is never taken for a disc.
func TestAzureStackRealIoctl(t *testing.T) {
	root := t.TempDir()
	m := newDriveMounter()
	writeDrive(t, root, m, "sr0", "", "udf", map[string]string{"ovf-env.xml": "<Environment/>", "CustomData.bin": localUserData})
	env := Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 100 * time.Millisecond}
	got, err := newAzureStack(env).FetchConfig(context.Background())
	checkLocal(t, "azurestack", got, err, "", errNoDrive)
	if len(m.mounts) != 0 {
		t.Errorf("mounted %v without DISC_OK", m.mounts)
	}
}
