package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/guestchan/hyperv"
	"github.com/flintboot/flint/internal/guestchan/hyperv/hypervtest"
)

// fakeRunner records the commands it is asked to run and answers from a
// table keyed by the command line; do runs side effects (writing the file
// "vmur re" receives, say).
type fakeRunner struct {
	out  map[string]string
	errs map[string]error
	do   func(argv []string) error
	argv [][]string
}

func (r *fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	r.argv = append(r.argv, argv)
	line := strings.Join(argv, " ")
	if err := r.errs[line]; err != nil {
		return nil, err
	}
	if r.do != nil {
		if err := r.do(argv); err != nil {
			return nil, err
		}
	}
	return []byte(r.out[line]), nil
}

func (r *fakeRunner) lines() []string {
	var l []string
	for _, a := range r.argv {
		l = append(l, strings.Join(a, " "))
	}
	return l
}

func TestHyperVConfigAssembly(t *testing.T) {
	tests := []struct {
		name   string
		items  []hyperv.Record
		want   string
		source string
	}{
		{"single", []hyperv.Record{{Key: "ignition.config", Value: "{}"}, {Key: "ignition.config.0", Value: "ignored"}}, "{}", "ignition.config"},
		{"split", []hyperv.Record{{Key: "ignition.config.1", Value: "b"}, {Key: "ignition.config.0", Value: "a"}, {Key: "ignition.config.2", Value: "c"}}, "abc", "ignition.config.0..2"},
		{"split stops at a gap", []hyperv.Record{{Key: "ignition.config.0", Value: "a"}, {Key: "ignition.config.1", Value: "b"}, {Key: "ignition.config.3", Value: "d"}}, "ab", "ignition.config.0..1"},
		{"empty single falls back to split", []hyperv.Record{{Key: "ignition.config", Value: ""}, {Key: "ignition.config.0", Value: "a"}}, "a", "ignition.config.0..0"},
		{"split without 0", []hyperv.Record{{Key: "ignition.config.1", Value: "b"}}, "", ""},
		{"none", []hyperv.Record{{Key: "other", Value: "x"}}, "", ""},
	}
	for _, tt := range tests {
		got, source := hvConfig(hyperv.Pools{0: tt.items, 1: {{Key: "ignition.config", Value: "not pool 0"}}})
		if string(got) != tt.want || source != tt.source {
			t.Errorf("%s: hvConfig = %q from %q, want %q from %q", tt.name, got, source, tt.want, tt.source)
		}
	}
}

func TestHyperVFetchConfig(t *testing.T) {
	const config = `{"ignition":{"version":"3.4.0"}}`
	errOpen := errors.New("EACCES")
	tests := []struct {
		name      string
		host      [][]byte
		noDevice  bool
		openErr   error
		poolFile  []byte
		runErr    error
		want      string
		wantErr   error
		poolFiles int
	}{
		{name: "single key", host: [][]byte{hypervtest.HostSet(0, "ignition.config", config), hypervtest.HostSet(1, "g", "1")}, want: config, poolFiles: 2},
		{name: "split keys", host: [][]byte{hypervtest.HostSet(0, "ignition.config.0", config[:10]), hypervtest.HostSet(0, "ignition.config.1", config[10:])}, want: config, poolFiles: 1},
		{name: "no config", host: [][]byte{hypervtest.HostSet(0, "other", "x")}, wantErr: ErrNoConfig, poolFiles: 1},
		{name: "nothing at all", wantErr: ErrNoConfig},
		{name: "daemon holds the channel", openErr: hyperv.ErrBusy, poolFile: append(hypervtest.PoolRecord("ignition.config.0", config[:5]), hypervtest.PoolRecord("ignition.config.1", config[5:])...), want: config},
		{name: "daemon holds the channel, no pool file", openErr: hyperv.ErrBusy, wantErr: ErrNoConfig},
		{name: "not Hyper-V", noDevice: true, wantErr: ErrNoProvider},
		{name: "open fails", openErr: errOpen, wantErr: errOpen},
		{name: "modprobe fails", runErr: errors.New("modprobe: FATAL"), wantErr: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if !tt.noDevice {
				if err := os.MkdirAll(filepath.Join(root, "dev/vmbus"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "dev/vmbus/hv_kvp"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.poolFile != nil {
				if err := os.MkdirAll(filepath.Join(root, "var/lib/hyperv"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "var/lib/hyperv/.kvp_pool_0"), tt.poolFile, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			runner := &fakeRunner{errs: map[string]error{}}
			if tt.runErr != nil {
				runner.errs["modprobe hv_utils"] = tt.runErr
			}
			d := hypervtest.NewDriver(t, hyperv.ErrQuiet, tt.host...)
			p := newHyperV(Env{Root: root, Runner: runner, Logger: hvTestLogger(t), Wait: 50 * time.Millisecond}).(*hypervProvider)
			p.quiet = 20 * time.Millisecond
			p.openKVP = func(path string) (hyperv.Channel, error) {
				if path != filepath.Join(root, "dev/vmbus/hv_kvp") {
					t.Errorf("opened %s", path)
				}
				if tt.openErr != nil {
					return nil, fmt.Errorf("%s: %w", path, tt.openErr)
				}
				return d, nil
			}
			got, err := p.FetchConfig(context.Background())
			if fmt.Sprint(runner.lines()) != "[modprobe hv_utils]" {
				t.Errorf("ran %q, want modprobe hv_utils", runner.lines())
			}
			switch {
			case tt.runErr != nil:
				if !errors.Is(err, tt.runErr) {
					t.Errorf("FetchConfig() = %v, want the modprobe error", err)
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("FetchConfig() = %q, %v; want %v", got, err, tt.wantErr)
				}
			default:
				if err != nil || string(got) != tt.want {
					t.Errorf("FetchConfig() = %q, %v; want %q", got, err, tt.want)
				}
			}
			if tt.openErr == nil && !tt.noDevice && !d.Closed {
				t.Error("the KVP channel was not closed")
			}
			files := p.KVPPoolFiles()
			if len(files) != tt.poolFiles {
				t.Errorf("KVPPoolFiles() has %d files, want %d", len(files), tt.poolFiles)
			}
			if f, ok := files["/var/lib/hyperv/.kvp_pool_0"]; ok {
				records, err := hyperv.ParsePoolFile(f)
				if err != nil || len(records) == 0 {
					t.Errorf("pool file 0 = %v, %v", records, err)
				}
			}
		})
	}
}
