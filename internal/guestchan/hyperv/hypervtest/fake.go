// Package hypervtest has a fake hv_utils KVP driver for tests of package
// hyperv and of its users: the host's messages and the pool files are laid
// out by hand from struct hv_kvp_msg in <linux/hyperv.h> and struct
// kvp_record in hv_kvp_daemon, independently of package hyperv's decoder.
// It does not import package hyperv (whose own tests use it): the error
// its driver gives for a quiet host is the caller's hyperv.ErrQuiet.
//
// Family: config sources, platforms and agent (internal/README.md).
package hypervtest

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// MsgSize is sizeof(struct hv_kvp_msg): 7430 bytes.
const MsgSize = 7430

// HostMsg is a message from the host: operation and pool bytes, 2 bytes of
// padding, then the body; struct hv_kvp_exchg_msg_value is value_type,
// key_size, value_size (the NUL counted), key[512], value[2048].
func HostMsg(op, pool byte) []byte {
	m := make([]byte, MsgSize)
	m[0], m[1] = op, pool
	return m
}

// HostSet is KVP_OP_SET of key=value (REG_SZ) in pool.
func HostSet(pool byte, key, value string) []byte {
	m := HostMsg(1, pool)
	binary.LittleEndian.PutUint32(m[4:], 1) // REG_SZ
	binary.LittleEndian.PutUint32(m[8:], uint32(len(key)+1))
	binary.LittleEndian.PutUint32(m[12:], uint32(len(value)+1))
	copy(m[16:], key)
	copy(m[16+512:], value)
	return m
}

// HostGet is KVP_OP_GET of key in pool.
func HostGet(pool byte, key string) []byte {
	m := HostMsg(0, pool)
	binary.LittleEndian.PutUint32(m[8:], uint32(len(key)+1))
	copy(m[16:], key)
	return m
}

// HostDelete is KVP_OP_DELETE of key in pool (struct hv_kvp_msg_delete:
// key_size, key[512]).
func HostDelete(pool byte, key string) []byte {
	m := HostMsg(2, pool)
	binary.LittleEndian.PutUint32(m[4:], uint32(len(key)+1))
	copy(m[8:], key)
	return m
}

// HostEnumerate is KVP_OP_ENUMERATE of item index of pool (struct
// hv_kvp_msg_enumerate: index, then the value structure).
func HostEnumerate(pool byte, index uint32) []byte {
	m := HostMsg(3, pool)
	binary.LittleEndian.PutUint32(m[4:], index)
	return m
}

// ReplyStatus is the status the guest put in a reply's header.
func ReplyStatus(m []byte) uint32 { return binary.LittleEndian.Uint32(m) }

// PoolRecord is one record of a pool file: key NUL-padded to 512 bytes,
// value NUL-padded to 2048.
func PoolRecord(key, value string) []byte {
	r := make([]byte, 512+2048)
	copy(r, key)
	copy(r[512:], value)
	return r
}

// Driver plays hv_utils' side of /dev/vmbus/hv_kvp (hyperv.Channel).
type Driver struct {
	t *testing.T
	// quiet is what Recv returns when the host has nothing to send.
	quiet error
	// Host is what the host sends after registration; Endless repeats
	// the last message forever (a host polling the auto pool).
	Host    [][]byte
	Endless bool
	// SendErr fails the nth send (1-based).
	SendErr map[int]error

	// Registered, Replies (the guest's messages after its registration),
	// Sends and Closed are what the guest did.
	Registered bool
	Replies    [][]byte
	Sends      int
	Closed     bool

	queue [][]byte
}

// NewDriver returns a driver whose host sends host after registration;
// quiet is hyperv.ErrQuiet.
func NewDriver(t *testing.T, quiet error, host ...[]byte) *Driver {
	if quiet == nil {
		t.Fatal("hypervtest.NewDriver without the quiet error")
	}
	return &Driver{t: t, quiet: quiet, Host: host}
}

// Send takes one message from the guest: its registration first, then its
// replies.
func (d *Driver) Send(msg []byte) error {
	d.Sends++
	if err := d.SendErr[d.Sends]; err != nil {
		return err
	}
	if len(msg) != MsgSize {
		d.t.Errorf("message of %d bytes, want sizeof(struct hv_kvp_msg) = %d", len(msg), MsgSize)
	}
	if !d.Registered {
		if msg[0] != 100 {
			d.t.Errorf("first message has operation %d, want KVP_OP_REGISTER1 (100)", msg[0])
		}
		d.Registered = true
		// The driver answers with its own registration and version.
		echo := HostMsg(100, 0)
		copy(echo[4:], "3.1")
		d.queue = append([][]byte{echo}, d.Host...)
		return nil
	}
	d.Replies = append(d.Replies, bytes.Clone(msg))
	return nil
}

// Recv returns the host's next message, or the quiet error.
func (d *Driver) Recv(timeout time.Duration) ([]byte, error) {
	if !d.Registered {
		d.t.Error("recv before registration")
	}
	if len(d.queue) == 0 {
		if d.Endless && len(d.Host) > 0 {
			time.Sleep(time.Millisecond)
			return bytes.Clone(d.Host[len(d.Host)-1]), nil
		}
		return nil, d.quiet
	}
	m := d.queue[0]
	d.queue = d.queue[1:]
	return m, nil
}

// Close records that the channel was closed.
func (d *Driver) Close() error {
	d.Closed = true
	return nil
}
