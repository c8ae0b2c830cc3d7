package hyperv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

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
		return nil, ErrQuiet
	}
	m := d.queue[0]
	d.queue = d.queue[1:]
	return m, nil
}

func (d *fakeKVPDriver) Close() error {
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
	pools, err := ReadChannel(context.Background(), d, time.Second, time.Minute)
	if err != nil {
		t.Fatalf("ReadChannel error: %v", err)
	}
	wantPool0 := []Record{{"ignition.config", `{"ignition":{"version":"3.4.0"}}`}, {"other", "2"}, {strings.Repeat("k", 512), "v"}}
	if fmt.Sprint(pools[0]) != fmt.Sprint(wantPool0) {
		t.Errorf("pool 0 = %v, want %v", pools[0], wantPool0)
	}
	if fmt.Sprint(pools[1]) != fmt.Sprint([]Record{{"guest", "x"}}) {
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
	if key, value := cString(enum[20:532]), cString(enum[532:]); key != "other" || value != "2" {
		t.Errorf("ENUMERATE reply = %q=%q, want other=2", key, value)
	}
}

func TestReadKVPChannelErrors(t *testing.T) {
	ctx := context.Background()
	errIO := errors.New("EIO")

	d := &fakeKVPDriver{t: t, sendErr: map[int]error{1: errIO}}
	if _, err := ReadChannel(ctx, d, time.Second, time.Minute); !errors.Is(err, errIO) {
		t.Errorf("registration failure = %v, want EIO", err)
	}

	d = &fakeKVPDriver{t: t, host: [][]byte{hostSet(0, "a", "b")}, sendErr: map[int]error{2: errIO}}
	if _, err := ReadChannel(ctx, d, time.Second, time.Minute); !errors.Is(err, errIO) {
		t.Errorf("reply failure = %v, want EIO", err)
	}

	d = &fakeKVPDriver{t: t, host: [][]byte{make([]byte, 100)}}
	if _, err := ReadChannel(ctx, d, time.Second, time.Minute); err == nil || !strings.Contains(err.Error(), "short message") {
		t.Errorf("short message = %v, want an error", err)
	}

	// A host that never goes quiet is cut off at the limit, with what it
	// sent so far.
	d = &fakeKVPDriver{t: t, host: [][]byte{hostSet(0, "ignition.config", "{}"), hostEnumerate(2, 0)}, endless: true}
	start := time.Now()
	pools, err := ReadChannel(ctx, d, time.Second, 100*time.Millisecond)
	if err != nil || fmt.Sprint(pools[0]) != "[{ignition.config {}}]" {
		t.Errorf("chatty host = %v, %v; want the config", pools, err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("chatty host kept the reader %v", time.Since(start))
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	d = &fakeKVPDriver{t: t}
	if _, err := ReadChannel(cctx, d, time.Second, time.Minute); !errors.Is(err, context.Canceled) {
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
	records, err := ParsePoolFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{"ignition.config.0", `{"ignition":`},
		{"ignition.config.1", `{"version":"3.4.0"}}`},
		{strings.Repeat("k", 512), strings.Repeat("v", 2048)},
	}
	if fmt.Sprint(records) != fmt.Sprint(want) {
		t.Errorf("ParsePoolFile = %v, want %v", records, want)
	}

	if r, err := ParsePoolFile(nil); err != nil || len(r) != 0 {
		t.Errorf("ParsePoolFile(empty) = %v, %v", r, err)
	}
	if _, err := ParsePoolFile(file[:len(file)-1]); err == nil {
		t.Error("ParsePoolFile of a truncated file succeeded")
	}

	// Encoding writes the same layout (a key or value that fills its field
	// loses its last byte to the NUL, as in hv_kvp_daemon).
	enc := EncodePoolFile([]Record{{"a", "b"}, {"ignition.config", "{}"}})
	wantEnc := append(poolRecord("a", "b"), poolRecord("ignition.config", "{}")...)
	if !bytes.Equal(enc, wantEnc) {
		t.Errorf("EncodePoolFile layout differs")
	}
}
