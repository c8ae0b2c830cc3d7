package platform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/guestchan/vbox"
	"github.com/flintboot/flint/internal/guestchan/vbox/vboxtest"
)

func testVirtualBox(t *testing.T, dev *vboxtest.FakeGuest, withDevice bool) *virtualboxProvider {
	root := t.TempDir()
	if withDevice {
		if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "dev/vboxguest"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := newVirtualBox(Env{Root: root, Logger: hvTestLogger(t), Wait: 50 * time.Millisecond}).(*virtualboxProvider)
	p.open = func(path string) (vbox.Device, error) {
		if path != filepath.Join(root, "dev/vboxguest") {
			t.Errorf("opened %s", path)
		}
		return dev, nil
	}
	return p
}

func TestVirtualBoxFetchConfig(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	big := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/big","contents":{"source":"data:,` + strings.Repeat("a", 5000) + `"}}]}}`
	errIO := errors.New("EIO")
	tests := []struct {
		name     string
		props    map[string]string
		noDevice bool
		setup    func(*vboxtest.FakeGuest)
		want     string
		wantErr  error
		errText  string
		getProps int
	}{
		{name: "config", props: map[string]string{"/Ignition/Config": config}, want: config, getProps: 2},
		{name: "empty encoding is fine", props: map[string]string{"/Ignition/Config": config, "/Ignition/Config/Encoding": ""}, want: config, getProps: 2},
		{name: "larger than the first buffer", props: map[string]string{"/Ignition/Config": big}, want: big, getProps: 3},
		{name: "no property", props: map[string]string{}, wantErr: ErrNoConfig, getProps: 2},
		{name: "empty property", props: map[string]string{"/Ignition/Config": ""}, wantErr: ErrNoConfig, getProps: 2},
		{name: "encoding set", props: map[string]string{"/Ignition/Config": config, "/Ignition/Config/Encoding": "gzip"}, errText: `unsupported /Ignition/Config/Encoding value "gzip"`, getProps: 1},
		{name: "no device", noDevice: true, wantErr: ErrNoProvider},
		{name: "growing property", props: map[string]string{"/Ignition/Config": big}, setup: func(f *vboxtest.FakeGuest) { f.Grow = true }, errText: "keeps growing", getProps: 6},
		{name: "value without NUL", props: map[string]string{"/Ignition/Config/Encoding": "", "/Ignition/Config": config}, setup: func(f *vboxtest.FakeGuest) { f.NoNUL = true }, errText: "not NUL-terminated", getProps: 1},
		{name: "host error", props: map[string]string{"/Ignition/Config": config}, setup: func(f *vboxtest.FakeGuest) { f.RCs[7] = -2 }, errText: "VirtualBox status -2", getProps: 1},
		{name: "call ioctl fails", props: map[string]string{"/Ignition/Config": config}, setup: func(f *vboxtest.FakeGuest) { f.Errno[7] = errIO }, wantErr: errIO},
		{name: "connect refused", setup: func(f *vboxtest.FakeGuest) { f.RCs[4] = -78 /* VERR_NOT_FOUND */ }, errText: "connecting to VBoxGuestPropSvc: VERR_NOT_FOUND"},
		{name: "old driver", setup: func(f *vboxtest.FakeGuest) { f.RCs[0] = -11 }, errText: "negotiating the vboxguest interface version"},
		{name: "version ioctl fails", setup: func(f *vboxtest.FakeGuest) { f.Errno[0] = errIO }, wantErr: errIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := vboxtest.New(t, tt.props)
			if tt.setup != nil {
				tt.setup(dev)
			}
			got, err := testVirtualBox(t, dev, !tt.noDevice).FetchConfig(context.Background())
			checkFetchConfig(t, got, err, tt.want, tt.wantErr, tt.errText)
			if len(dev.Calls) != tt.getProps {
				t.Errorf("%d HGCM calls, want %d", len(dev.Calls), tt.getProps)
			}
			if !tt.noDevice && (dev.Connected || !dev.Closed) {
				t.Errorf("after FetchConfig: connected %v, closed %v; want disconnected and closed", dev.Connected, dev.Closed)
			}
		})
	}
}

func TestVirtualBoxDeleteConfig(t *testing.T) {
	tests := []struct {
		name     string
		props    map[string]string
		readonly string
		want     map[string]string
		errText  string
	}{
		{name: "both", props: map[string]string{"/Ignition/Config": "{}", "/Ignition/Config/Encoding": "", "/Other": "x"}, want: map[string]string{"/Other": "x"}},
		{name: "none", props: map[string]string{"/Other": "x"}, want: map[string]string{"/Other": "x"}},
		{name: "read-only", props: map[string]string{"/Ignition/Config": "{}"}, readonly: "/Ignition/Config", want: map[string]string{"/Ignition/Config": "{}"}, errText: "VERR_PERMISSION_DENIED (is the property read-only for the guest?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := vboxtest.New(t, tt.props)
			if tt.readonly != "" {
				dev.Readonly[tt.readonly] = true
			}
			err := testVirtualBox(t, dev, true).DeleteConfig(context.Background())
			if tt.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("DeleteConfig() error = %v, want one containing %q", err, tt.errText)
				}
			} else if err != nil {
				t.Errorf("DeleteConfig() error: %v", err)
			}
			if len(dev.Props) != len(tt.want) {
				t.Errorf("after DeleteConfig properties = %v, want %v", dev.Props, tt.want)
			}
			for k, v := range tt.want {
				if dev.Props[k] != v {
					t.Errorf("after DeleteConfig properties = %v, want %v", dev.Props, tt.want)
				}
			}
			if dev.Connected || !dev.Closed {
				t.Errorf("after DeleteConfig: connected %v, closed %v", dev.Connected, dev.Closed)
			}
		})
	}
}
