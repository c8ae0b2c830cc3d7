package platform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeCDROMs answers CDROM_DRIVE_STATUS for devices by name (sr0, sr1…);
// a device it does not know has no disc. It counts the questions.
type fakeCDROMs struct {
	mu     sync.Mutex
	status map[string]cdromStatus
	err    map[string]error
	asked  map[string]int
}

func (f *fakeCDROMs) set(name string, s cdromStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status[name] = s
}

func (f *fakeCDROMs) driveStatus(dev string) (cdromStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := filepath.Base(dev)
	f.asked[name]++
	if err := f.err[name]; err != nil {
		return 0, err
	}
	if s, ok := f.status[name]; ok {
		return s, nil
	}
	return cdsNoDisc, nil
}

func newFakeCDROMs() *fakeCDROMs {
	return &fakeCDROMs{status: map[string]cdromStatus{}, err: map[string]error{}, asked: map[string]int{}}
}

func TestReadOVFMedia(t *testing.T) {
	const (
		ovfEnv     = `<?xml version="1.0"?><Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"/>`
		customData = `{"ignition":{"version":"3.4.0"}}`
	)
	type cdrom struct {
		name   string
		fstype string
		status cdromStatus
		err    error
		files  map[string]string
	}
	tests := []struct {
		name     string
		drives   []cdrom
		mountErr error
		want     string
		wantErr  error // errors.Is target
		wantFrom string
	}{
		{
			name:   "udf with custom data",
			drives: []cdrom{{"sr0", "udf", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": customData}}},
			want:   customData, wantFrom: "sr0",
		},
		{
			name:   "iso9660 (azure stack)",
			drives: []cdrom{{"sr0", "iso9660", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": customData}}},
			want:   customData, wantFrom: "sr0",
		},
		{
			name:    "no custom data",
			drives:  []cdrom{{"sr0", "udf", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv}}},
			wantErr: ErrNoConfig, wantFrom: "sr0",
		},
		{
			name:    "empty custom data",
			drives:  []cdrom{{"sr0", "udf", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": ""}}},
			wantErr: ErrNoConfig, wantFrom: "sr0",
		},
		{
			name: "skips a disc without ovf-env.xml",
			drives: []cdrom{
				{"sr0", "iso9660", cdsDiscOK, nil, map[string]string{"CustomData.bin": "not this one"}},
				{"sr1", "udf", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": customData}},
			},
			want: customData, wantFrom: "sr1",
		},
		{
			name: "skips drives without a disc or with a failing ioctl",
			drives: []cdrom{
				{"sr0", "udf", cdsNoDisc, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": "no disc"}},
				{"sr1", "udf", cdsTrayOpen, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": "tray open"}},
				{"sr2", "udf", cdsDiscOK, errors.New("ioctl: EIO"), map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": "eio"}},
				{"sr3", "udf", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": customData}},
			},
			want: customData, wantFrom: "sr3",
		},
		{
			name:    "skips other filesystems",
			drives:  []cdrom{{"sr0", "fat16", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": customData}}},
			wantErr: errNoDrive,
		},
		{
			name:    "no drive at all",
			wantErr: errNoDrive,
		},
		{
			name:     "mount keeps failing",
			drives:   []cdrom{{"sr0", "udf", cdsDiscOK, nil, map[string]string{"ovf-env.xml": ovfEnv, "CustomData.bin": customData}}},
			mountErr: errFakeMount,
			wantErr:  errNoDrive,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			m.mountErr = tt.mountErr
			cds := newFakeCDROMs()
			for _, d := range tt.drives {
				writeDrive(t, root, m, d.name, "", d.fstype, d.files)
				cds.status[d.name] = d.status
				cds.err[d.name] = d.err
			}
			env := Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 200 * time.Millisecond}
			got, err := readOVFMedia(context.Background(), env, cds.driveStatus)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("readOVFMedia() = %q, %v, want %v", got, err, tt.wantErr)
				}
			} else if err != nil || string(got) != tt.want {
				t.Errorf("readOVFMedia() = %q, %v, want %q", got, err, tt.want)
			}
			if tt.wantFrom != "" {
				last := m.mounts[len(m.mounts)-1]
				if filepath.Base(last.Source) != tt.wantFrom {
					t.Errorf("read from %s, want %s", last.Source, tt.wantFrom)
				}
				if last.FSType != "udf" && last.FSType != "iso9660" {
					t.Errorf("mounted as %s, want udf or iso9660", last.FSType)
				}
			}
			m.checkClean(t)
		})
	}
}

// TestReadOVFMediaDiscArrives: Ignition rescans until the medium is
// there; a drive that first has no disc is asked again.
func TestReadOVFMediaDiscArrives(t *testing.T) {
	root := t.TempDir()
	m := newDriveMounter()
	writeDrive(t, root, m, "sr0", "", "udf", map[string]string{"ovf-env.xml": "<Environment/>", "CustomData.bin": "{}"})
	cds := newFakeCDROMs()
	cds.set("sr0", cdsDriveNotReady)
	go func() {
		time.Sleep(100 * time.Millisecond)
		cds.set("sr0", cdsDiscOK)
	}()
	env := Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 5 * time.Second}
	got, err := readOVFMedia(context.Background(), env, cds.driveStatus)
	if err != nil || string(got) != "{}" {
		t.Errorf("readOVFMedia() = %q, %v, want {}", got, err)
	}
	if cds.asked["sr0"] < 2 {
		t.Errorf("drive status asked %d times, want a rescan", cds.asked["sr0"])
	}
	m.checkClean(t)
}

// TestReadOVFMediaWaitsForContext: without env.Wait the search lasts as
// long as the context (Ignition waits forever).
func TestReadOVFMediaWaitsForContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	env := Env{Root: t.TempDir(), Mounter: newDriveMounter(), Logger: localTestLogger(t)}
	_, err := readOVFMedia(ctx, env, newFakeCDROMs().driveStatus)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("readOVFMedia() = %v, want context.DeadlineExceeded", err)
	}
}

// TestCDROMDriveStatusNotADrive runs the real ioctl on a regular file: it
// must fail (ENOTTY), never claim a disc.
func TestCDROMDriveStatusNotADrive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sr0")
	if err := os.WriteFile(p, []byte("not a drive"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := cdromDriveStatus(p)
	if err == nil {
		t.Errorf("cdromDriveStatus(regular file) = %v, nil, want an error", st)
	}
	if _, err := cdromDriveStatus(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cdromDriveStatus(missing) = %v, want ErrNotExist", err)
	}
}

func TestCDROMStatusString(t *testing.T) {
	for s, want := range map[cdromStatus]string{cdsNoInfo: "no info", cdsDiscOK: "disc ok", cdromStatus(9): "status 9"} {
		if got := s.String(); got != want {
			t.Errorf("cdromStatus(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}

// TestReadOVFDriveStableReason: a drive that keeps failing to mount gives
// the same reason on every scan, so it is logged once, not every second.
func TestReadOVFDriveStableReason(t *testing.T) {
	root := t.TempDir()
	m := newDriveMounter()
	m.mountErr = errFakeMount
	writeDrive(t, root, m, "sr0", "", "udf", map[string]string{"ovf-env.xml": "<Environment/>"})
	cds := newFakeCDROMs()
	cds.set("sr0", cdsDiscOK)
	env := Env{Root: root, Mounter: m, Logger: localTestLogger(t)}
	dev := filepath.Join(root, "dev", "sr0")
	_, first, err1 := readOVFDrive(env, dev, cds.driveStatus, customDataFile)
	_, second, err2 := readOVFDrive(env, dev, cds.driveStatus, customDataFile)
	if err1 != nil || err2 != nil || first == "" || first != second {
		t.Errorf("readOVFDrive twice = %q, %v and %q, %v, want the same skip reason", first, err1, second, err2)
	}
	m.checkClean(t)
}
