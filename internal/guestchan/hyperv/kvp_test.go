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

	"github.com/flintboot/flint/internal/guestchan/hyperv/hypervtest"
)

// oversizedKey is a SET whose key fills its 512-byte field without a NUL
// and whose key_size claims more.
func oversizedKey() []byte {
	m := hypervtest.HostSet(0, "", "v")
	copy(m[16:16+512], strings.Repeat("k", 512))
	binary.LittleEndian.PutUint32(m[8:], 600)
	return m
}

func TestReadKVPChannel(t *testing.T) {
	d := hypervtest.NewDriver(t, ErrQuiet,
		hypervtest.HostSet(0, "ignition.config", `{"ignition":{"version":"3.4.0"}}`),
		hypervtest.HostSet(0, "other", "1"),
		hypervtest.HostSet(1, "guest", "x"),
		hypervtest.HostSet(0, "other", "2"),  // update
		hypervtest.HostGet(0, "other"),       // answered from pool 0
		hypervtest.HostGet(0, "missing"),     // HV_S_CONT
		hypervtest.HostEnumerate(2, 0),       // auto pool: HV_S_CONT
		hypervtest.HostEnumerate(0, 1),       // the second item of pool 0
		hypervtest.HostEnumerate(0, 9),       // past the end: HV_S_CONT
		hypervtest.HostSet(0, "doomed", "y"), //
		hypervtest.HostDelete(0, "doomed"),   // HV_S_OK
		hypervtest.HostDelete(0, "doomed"),   // HV_S_CONT
		hypervtest.HostMsg(4, 0),             // KVP_OP_GET_IP_INFO: HV_E_FAIL
		hypervtest.HostMsg(1, 9),             // no such pool: HV_E_FAIL
		hypervtest.HostSet(0, "", "no key"),  // HV_E_FAIL
		oversizedKey(),                       // key_size past the field: bounded by the field
	)
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
	if len(d.Replies) != len(wantStatus) {
		t.Fatalf("%d replies, want %d (the registration echo is not answered)", len(d.Replies), len(wantStatus))
	}
	for i, want := range wantStatus {
		if got := hypervtest.ReplyStatus(d.Replies[i]); got != want {
			t.Errorf("reply %d status = %#x, want %#x", i, got, want)
		}
	}
	// The GET reply carries the value, NUL included in value_size.
	get := d.Replies[4]
	if size := binary.LittleEndian.Uint32(get[12:]); size != 2 || string(get[528:530]) != "2\x00" {
		t.Errorf("GET reply value_size %d, value %q", size, get[528:531])
	}
	// The ENUMERATE reply carries item 1 of pool 0 after the index.
	enum := d.Replies[7]
	if key, value := cString(enum[20:532]), cString(enum[532:]); key != "other" || value != "2" {
		t.Errorf("ENUMERATE reply = %q=%q, want other=2", key, value)
	}
}

func TestReadKVPChannelErrors(t *testing.T) {
	ctx := context.Background()
	errIO := errors.New("EIO")

	d := hypervtest.NewDriver(t, ErrQuiet)
	d.SendErr = map[int]error{1: errIO}
	if _, err := ReadChannel(ctx, d, time.Second, time.Minute); !errors.Is(err, errIO) {
		t.Errorf("registration failure = %v, want EIO", err)
	}

	d = hypervtest.NewDriver(t, ErrQuiet, hypervtest.HostSet(0, "a", "b"))
	d.SendErr = map[int]error{2: errIO}
	if _, err := ReadChannel(ctx, d, time.Second, time.Minute); !errors.Is(err, errIO) {
		t.Errorf("reply failure = %v, want EIO", err)
	}

	d = hypervtest.NewDriver(t, ErrQuiet, make([]byte, 100))
	if _, err := ReadChannel(ctx, d, time.Second, time.Minute); err == nil || !strings.Contains(err.Error(), "short message") {
		t.Errorf("short message = %v, want an error", err)
	}

	// A host that never goes quiet is cut off at the limit, with what it
	// sent so far.
	d = hypervtest.NewDriver(t, ErrQuiet, hypervtest.HostSet(0, "ignition.config", "{}"), hypervtest.HostEnumerate(2, 0))
	d.Endless = true
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
	d = hypervtest.NewDriver(t, ErrQuiet)
	if _, err := ReadChannel(cctx, d, time.Second, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled = %v, want context.Canceled", err)
	}
}

func TestKVPPoolFile(t *testing.T) {
	file := bytes.Join([][]byte{
		hypervtest.PoolRecord("ignition.config.0", `{"ignition":`),
		hypervtest.PoolRecord("", ""), // an empty slot
		hypervtest.PoolRecord("ignition.config.1", `{"version":"3.4.0"}}`),
		hypervtest.PoolRecord(strings.Repeat("k", 512), strings.Repeat("v", 2048)), // no NULs at all
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
	wantEnc := append(hypervtest.PoolRecord("a", "b"), hypervtest.PoolRecord("ignition.config", "{}")...)
	if !bytes.Equal(enc, wantEnc) {
		t.Errorf("EncodePoolFile layout differs")
	}
}
