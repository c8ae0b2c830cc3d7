package sys

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// udevMessage builds a processed event's message as udevd sends it.
func udevMessage(props string) []byte {
	b := make([]byte, 40)
	copy(b, "libudev\x00")
	binary.BigEndian.PutUint32(b[8:], udevMonitorMagic)
	binary.NativeEndian.PutUint32(b[12:], 40)
	binary.NativeEndian.PutUint32(b[16:], 40)
	binary.NativeEndian.PutUint32(b[20:], uint32(len(props)))
	return append(b, props...)
}

func TestParseUdevMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		want UdevEvent
		ok   bool
	}{
		{"add", udevMessage("ACTION=add\x00DEVPATH=/devices/virtio3/block/vdb/vdb1\x00SUBSYSTEM=block\x00DEVNAME=/dev/vdb1\x00SEQNUM=1234\x00"),
			UdevEvent{Action: "add", Devname: "/dev/vdb1", Seqnum: 1234}, true},
		{"relative name, uuid", udevMessage("ACTION=change\x00DEVNAME=vdb1\x00SEQNUM=7\x00SYNTH_UUID=0b5e6f1a-2c3d-4e5f-8a9b-0c1d2e3f4a5b"),
			UdevEvent{Action: "change", Devname: "/dev/vdb1", Seqnum: 7, SynthUUID: "0b5e6f1a-2c3d-4e5f-8a9b-0c1d2e3f4a5b"}, true},
		{"kernel's", []byte("add@/devices/virtio3/block/vdb/vdb1\x00ACTION=add\x00"), UdevEvent{}, false},
		{"short", udevMessage("")[:20], UdevEvent{}, false},
		{"properties past the end", func() []byte { b := udevMessage("ACTION=add"); binary.NativeEndian.PutUint32(b[20:], 99); return b }(), UdevEvent{}, false},
	} {
		got, ok := parseUdevMessage(tc.msg)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseUdevMessage(%s) = %+v, %v, want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestUdevPing: the ping is answered when the server, having accepted
// the connection, reads the ping and the end message and closes it, as
// udevd does; without a server it fails at once.
func TestUdevPing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control")
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(l)
	if err := unix.Bind(l, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(l, 0); err != nil {
		t.Fatal(err)
	}
	got := make(chan []uint32, 1)
	go func() {
		c, _, err := unix.Accept(l)
		if err != nil {
			got <- nil
			return
		}
		defer unix.Close(c)
		var types []uint32
		for len(types) < 2 {
			b := make([]byte, 512)
			n, err := unix.Read(c, b)
			if err != nil || n != udevCtrlMsgSize || binary.NativeEndian.Uint32(b[16:]) != udevCtrlMagic {
				break
			}
			types = append(types, binary.NativeEndian.Uint32(b[20:]))
		}
		got <- types
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := udevPing(ctx, path); err != nil {
		t.Fatalf("udevPing() = %v, want nil", err)
	}
	if types := <-got; len(types) != 2 || types[0] != udevCtrlPing || types[1] != udevCtrlEnd {
		t.Errorf("udevPing sent message types %v, want [%d %d]", types, udevCtrlPing, udevCtrlEnd)
	}
	if err := udevPing(ctx, filepath.Join(t.TempDir(), "none")); !errors.Is(err, unix.ENOENT) {
		t.Errorf("udevPing(no socket) = %v, want ENOENT", err)
	}
}
