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

// The host's messages, laid out by hand from struct hv_kvp_msg in
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

func hostGet(pool byte, key string) []byte {
	m := hostMsg(0, pool)
	binary.LittleEndian.PutUint32(m[8:], uint32(len(key)+1))
	copy(m[16:], key)
	return m
}

func hostDelete(pool byte, key string) []byte {
	// struct hv_kvp_msg_delete: key_size, key[512]
	m := hostMsg(2, pool)
	binary.LittleEndian.PutUint32(m[4:], uint32(len(key)+1))
	copy(m[8:], key)
	return m
}

func hostEnumerate(pool byte, index uint32) []byte {
	// struct hv_kvp_msg_enumerate: index, then the value structure
	m := hostMsg(3, pool)
	binary.LittleEndian.PutUint32(m[4:], index)
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

func (d *fakeKVPDriver) send(msg []byte) error {
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

func (d *fakeKVPDriver) recv(timeout time.Duration) ([]byte, error) {
	if !d.registered {
		d.t.Error("recv before registration")
	}
	if len(d.queue) == 0 {
		if d.endless && len(d.host) > 0 {
			time.Sleep(time.Millisecond)
			return bytes.Clone(d.host[len(d.host)-1]), nil
		}
		return nil, errKVPQuiet
	}
	m := d.queue[0]
	d.queue = d.queue[1:]
	return m, nil
}

func (d *fakeKVPDriver) close() error {
	d.closed = true
	return nil
}

// oversizedKey is a SET whose key fills its 512-byte field without a NUL
// and whose key_size claims more.
func oversizedKey() []byte {
	m := hostSet(0, "", "v")
	copy(m[16:16+512], strings.Repeat("k", 512))
	binary.LittleEndian.PutUint32(m[8:], 600)
	return m
}

func replyStatus(m []byte) uint32 { return binary.LittleEndian.Uint32(m) }

func TestReadKVPChannel(t *testing.T) {
	d := &fakeKVPDriver{t: t, host: [][]byte{
		hostSet(0, "ignition.config", `{"ignition":{"version":"3.4.0"}}`),
		hostSet(0, "other", "1"),
		hostSet(1, "guest", "x"),
		hostSet(0, "other", "2"),  // update
		hostGet(0, "other"),       // answered from pool 0
		hostGet(0, "missing"),     // HV_S_CONT
		hostEnumerate(2, 0),       // auto pool: HV_S_CONT
		hostEnumerate(0, 1),       // the second item of pool 0
		hostEnumerate(0, 9),       // past the end: HV_S_CONT
		hostSet(0, "doomed", "y"), //
		hostDelete(0, "doomed"),   // HV_S_OK
		hostDelete(0, "doomed"),   // HV_S_CONT
		hostMsg(4, 0),             // KVP_OP_GET_IP_INFO: HV_E_FAIL
		hostMsg(1, 9),             // no such pool: HV_E_FAIL
		hostSet(0, "", "no key"),  // HV_E_FAIL
		oversizedKey(),            // key_size past the field: bounded by the field
	}}
	pools, err := readKVPChannel(context.Background(), d, time.Second, time.Minute)
	if err != nil {
		t.Fatalf("readKVPChannel error: %v", err)
	}
	wantPool0 := []kvpRecord{{"ignition.config", `{"ignition":{"version":"3.4.0"}}`}, {"other", "2"}, {strings.Repeat("k", 512), "v"}}
	if fmt.Sprint(pools[0]) != fmt.Sprint(wantPool0) {
		t.Errorf("pool 0 = %v, want %v", pools[0], wantPool0)
	}
	if fmt.Sprint(pools[1]) != fmt.Sprint([]kvpRecord{{"guest", "x"}}) {
		t.Errorf("pool 1 = %v", pools[1])
	}
	wantStatus := []uint32{0, 0, 0, 0, 0, 0x80070103, 0x80070103, 0, 0x80070103, 0, 0, 0x80070103, 0x80004005, 0x80004005, 0x80004005, 0}
	if len(d.replies) != len(wantStatus) {
		t.Fatalf("%d replies, want %d (the registration echo is not answered)", len(d.replies), len(wantStatus))
	}
	for i, want := range wantStatus {
		if got := replyStatus(d.replies[i]); got != want {
			t.Errorf("reply %d status = %#x, want %#x", i, got, want)
		}
	}
	// The GET reply carries the value, NUL included in value_size.
	get := d.replies[4]
	if size := binary.LittleEndian.Uint32(get[12:]); size != 2 || string(get[528:530]) != "2\x00" {
		t.Errorf("GET reply value_size %d, value %q", size, get[528:531])
	}
	// The ENUMERATE reply carries item 1 of pool 0 after the index.
	enum := d.replies[7]
	if key, value := kvpCString(enum[20:532]), kvpCString(enum[532:]); key != "other" || value != "2" {
		t.Errorf("ENUMERATE reply = %q=%q, want other=2", key, value)
	}
}

func TestReadKVPChannelErrors(t *testing.T) {
	ctx := context.Background()
	errIO := errors.New("EIO")

	d := &fakeKVPDriver{t: t, sendErr: map[int]error{1: errIO}}
	if _, err := readKVPChannel(ctx, d, time.Second, time.Minute); !errors.Is(err, errIO) {
		t.Errorf("registration failure = %v, want EIO", err)
	}

	d = &fakeKVPDriver{t: t, host: [][]byte{hostSet(0, "a", "b")}, sendErr: map[int]error{2: errIO}}
	if _, err := readKVPChannel(ctx, d, time.Second, time.Minute); !errors.Is(err, errIO) {
		t.Errorf("reply failure = %v, want EIO", err)
	}

	d = &fakeKVPDriver{t: t, host: [][]byte{make([]byte, 100)}}
	if _, err := readKVPChannel(ctx, d, time.Second, time.Minute); err == nil || !strings.Contains(err.Error(), "short message") {
		t.Errorf("short message = %v, want an error", err)
	}

	// A host that never goes quiet is cut off at the limit, with what it
	// sent so far.
	d = &fakeKVPDriver{t: t, host: [][]byte{hostSet(0, "ignition.config", "{}"), hostEnumerate(2, 0)}, endless: true}
	start := time.Now()
	pools, err := readKVPChannel(ctx, d, time.Second, 100*time.Millisecond)
	if err != nil || fmt.Sprint(pools[0]) != "[{ignition.config {}}]" {
		t.Errorf("chatty host = %v, %v; want the config", pools, err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("chatty host kept the reader %v", time.Since(start))
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	d = &fakeKVPDriver{t: t}
	if _, err := readKVPChannel(cctx, d, time.Second, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled = %v, want context.Canceled", err)
	}
}

// poolRecord lays out one record of a pool file by hand: key NUL-padded to
// 512 bytes, value NUL-padded to 2048.
func poolRecord(key, value string) []byte {
	r := make([]byte, 512+2048)
	copy(r, key)
	copy(r[512:], value)
	return r
}

func TestKVPPoolFile(t *testing.T) {
	file := bytes.Join([][]byte{
		poolRecord("ignition.config.0", `{"ignition":`),
		poolRecord("", ""), // an empty slot
		poolRecord("ignition.config.1", `{"version":"3.4.0"}}`),
		poolRecord(strings.Repeat("k", 512), strings.Repeat("v", 2048)), // no NULs at all
	}, nil)
	records, err := parseKVPPoolFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []kvpRecord{
		{"ignition.config.0", `{"ignition":`},
		{"ignition.config.1", `{"version":"3.4.0"}}`},
		{strings.Repeat("k", 512), strings.Repeat("v", 2048)},
	}
	if fmt.Sprint(records) != fmt.Sprint(want) {
		t.Errorf("parseKVPPoolFile = %v, want %v", records, want)
	}

	if r, err := parseKVPPoolFile(nil); err != nil || len(r) != 0 {
		t.Errorf("parseKVPPoolFile(empty) = %v, %v", r, err)
	}
	if _, err := parseKVPPoolFile(file[:len(file)-1]); err == nil {
		t.Error("parseKVPPoolFile of a truncated file succeeded")
	}

	// Encoding writes the same layout (a key or value that fills its field
	// loses its last byte to the NUL, as in hv_kvp_daemon).
	enc := encodeKVPPoolFile([]kvpRecord{{"a", "b"}, {"ignition.config", "{}"}})
	wantEnc := append(poolRecord("a", "b"), poolRecord("ignition.config", "{}")...)
	if !bytes.Equal(enc, wantEnc) {
		t.Errorf("encodeKVPPoolFile layout differs")
	}
}

func TestHyperVConfigAssembly(t *testing.T) {
	tests := []struct {
		name   string
		items  []kvpRecord
		want   string
		source string
	}{
		{"single", []kvpRecord{{"ignition.config", "{}"}, {"ignition.config.0", "ignored"}}, "{}", "ignition.config"},
		{"split", []kvpRecord{{"ignition.config.1", "b"}, {"ignition.config.0", "a"}, {"ignition.config.2", "c"}}, "abc", "ignition.config.0..2"},
		{"split stops at a gap", []kvpRecord{{"ignition.config.0", "a"}, {"ignition.config.1", "b"}, {"ignition.config.3", "d"}}, "ab", "ignition.config.0..1"},
		{"empty single falls back to split", []kvpRecord{{"ignition.config", ""}, {"ignition.config.0", "a"}}, "a", "ignition.config.0..0"},
		{"split without 0", []kvpRecord{{"ignition.config.1", "b"}}, "", ""},
		{"none", []kvpRecord{{"other", "x"}}, "", ""},
	}
	for _, tt := range tests {
		got, source := hvConfig(kvpPools{0: tt.items, 1: {{"ignition.config", "not pool 0"}}})
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
		{name: "daemon holds the channel", openErr: errKVPBusy, poolFile: append(poolRecord("ignition.config.0", config[:5]), poolRecord("ignition.config.1", config[5:])...), want: config},
		{name: "daemon holds the channel, no pool file", openErr: errKVPBusy, wantErr: ErrNoConfig},
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
			p.openKVP = func(path string) (kvpChannel, error) {
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
				records, err := parseKVPPoolFile(f)
				if err != nil || len(records) == 0 {
					t.Errorf("pool file 0 = %v, %v", records, err)
				}
			}
		})
	}
}
