package platform

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/guestchan/hyperv"
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

// The host's messages (package guestchan/hyperv has the others), laid out by hand from struct hv_kvp_msg in
// <linux/hyperv.h>: operation and pool bytes, 2 bytes of padding, then the
// body; struct hv_kvp_exchg_msg_value is value_type, key_size, value_size
// (the NUL counted), key[512], value[2048]. The whole message is 7430 bytes.
func hostMsg(op, pool byte) []byte {
	m := make([]byte, 7430)
	m[0], m[1] = op, pool
	return m
}

func hostSet(pool byte, key, value string) []byte {
	m := hostMsg(1, pool)
	binary.LittleEndian.PutUint32(m[4:], 1) // REG_SZ
	binary.LittleEndian.PutUint32(m[8:], uint32(len(key)+1))
	binary.LittleEndian.PutUint32(m[12:], uint32(len(value)+1))
	copy(m[16:], key)
	copy(m[16+512:], value)
	return m
}

// fakeKVPDriver plays hv_utils' side of /dev/vmbus/hv_kvp.
type fakeKVPDriver struct {
	t *testing.T
	// host is what the host sends after registration; endless repeats
	// the last message forever (a host polling the auto pool).
	host    [][]byte
	endless bool
	// sendErr fails the nth send (1-based).
	sendErr map[int]error

	registered bool
	queue      [][]byte
	replies    [][]byte
	sends      int
	closed     bool
}

func (d *fakeKVPDriver) Send(msg []byte) error {
	d.sends++
	if err := d.sendErr[d.sends]; err != nil {
		return err
	}
	if len(msg) != 7430 {
		d.t.Errorf("message of %d bytes, want sizeof(struct hv_kvp_msg) = 7430", len(msg))
	}
	if !d.registered {
		if msg[0] != 100 {
			d.t.Errorf("first message has operation %d, want KVP_OP_REGISTER1 (100)", msg[0])
		}
		d.registered = true
		// The driver answers with its own registration and version.
		echo := hostMsg(100, 0)
		copy(echo[4:], "3.1")
		d.queue = append([][]byte{echo}, d.host...)
		return nil
	}
	d.replies = append(d.replies, bytes.Clone(msg))
	return nil
}

func (d *fakeKVPDriver) Recv(timeout time.Duration) ([]byte, error) {
	if !d.registered {
		d.t.Error("recv before registration")
	}
	if len(d.queue) == 0 {
		if d.endless && len(d.host) > 0 {
			time.Sleep(time.Millisecond)
			return bytes.Clone(d.host[len(d.host)-1]), nil
		}
		return nil, hyperv.ErrQuiet
	}
	m := d.queue[0]
	d.queue = d.queue[1:]
	return m, nil
}

func (d *fakeKVPDriver) Close() error {
	d.closed = true
	return nil
}

// poolRecord lays out one record of a pool file by hand: key NUL-padded to
// 512 bytes, value NUL-padded to 2048.
func poolRecord(key, value string) []byte {
	r := make([]byte, 512+2048)
	copy(r, key)
	copy(r[512:], value)
	return r
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
		{name: "single key", host: [][]byte{hostSet(0, "ignition.config", config), hostSet(1, "g", "1")}, want: config, poolFiles: 2},
		{name: "split keys", host: [][]byte{hostSet(0, "ignition.config.0", config[:10]), hostSet(0, "ignition.config.1", config[10:])}, want: config, poolFiles: 1},
		{name: "no config", host: [][]byte{hostSet(0, "other", "x")}, wantErr: ErrNoConfig, poolFiles: 1},
		{name: "nothing at all", wantErr: ErrNoConfig},
		{name: "daemon holds the channel", openErr: hyperv.ErrBusy, poolFile: append(poolRecord("ignition.config.0", config[:5]), poolRecord("ignition.config.1", config[5:])...), want: config},
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
			d := &fakeKVPDriver{t: t, host: tt.host}
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
			if tt.openErr == nil && !tt.noDevice && !d.closed {
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
