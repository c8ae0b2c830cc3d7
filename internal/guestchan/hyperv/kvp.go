package hyperv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

const (
	// PoolExternal is the pool the host's items for the guest arrive in.
	PoolExternal = 0

	// Device is the KVP channel of hv_utils.
	Device = "/dev/vmbus/hv_kvp"
	// PoolFile is where hv_kvp_daemon keeps pool %d.
	PoolFile = "/var/lib/hyperv/.kvp_pool_%d"

	// <linux/hyperv.h>
	maxKey   = 512  // HV_KVP_EXCHANGE_MAX_KEY_SIZE
	maxValue = 2048 // HV_KVP_EXCHANGE_MAX_VALUE_SIZE
	// msgSize is sizeof(struct hv_kvp_msg): the 4-byte header/error
	// union and the body union, whose largest member is struct
	// hv_kvp_ipaddr_value (2*128 + 1 + 1 + 2*1024 + 2*1024 + 2*512 +
	// 2*1024 = 7426 bytes); everything is packed.
	msgSize = 4 + 7426
	// recordSize is struct kvp_record in hv_kvp_daemon: the layout of
	// the pool files.
	recordSize = maxKey + maxValue

	opGet          = 0
	opSet          = 1
	opDelete       = 2
	opEnumerate    = 3
	opGetIPInfo    = 4
	opSetIPInfo    = 5
	opRegister1    = 100
	poolAuto       = 2
	poolCount      = 5
	statusOK       = 0x00000000
	statusFail     = 0x80004005 // HV_E_FAIL
	statusContinue = 0x80070103 // HV_S_CONT: "no such item" / "no more items"

	// Offsets in struct hv_kvp_msg.
	offBody = 4
	// struct hv_kvp_exchg_msg_value within kvp_set/kvp_get (body + 0)
	// and kvp_enum_data (body + 4, after the index).
	offValueType = 0
	offKeySize   = 4
	offValueSize = 8
	offKey       = 12
	offValue     = 12 + maxKey
)

// Channel is an open /dev/vmbus/hv_kvp.
type Channel interface {
	// Recv returns the next message from the driver, or ErrQuiet when
	// none arrives within timeout.
	Recv(timeout time.Duration) ([]byte, error)
	// Send writes one message (a reply, or the registration).
	Send(msg []byte) error
	// Close closes the channel.
	Close() error
}

// Record is one KVP item.
type Record struct {
	Key, Value string
}

// Pools holds the items of each pool in the order they arrived.
type Pools map[int][]Record

// Get returns the value of key in pool.
func (p Pools) Get(pool int, key string) (string, bool) {
	for _, r := range p[pool] {
		if r.Key == key {
			return r.Value, true
		}
	}
	return "", false
}

func (p Pools) set(pool int, key, value string) {
	for i, r := range p[pool] {
		if r.Key == key {
			p[pool][i].Value = value
			return
		}
	}
	p[pool] = append(p[pool], Record{Key: key, Value: value})
}

func (p Pools) del(pool int, key string) bool {
	for i, r := range p[pool] {
		if r.Key == key {
			p[pool] = append(p[pool][:i:i], p[pool][i+1:]...)
			return true
		}
	}
	return false
}

// cString returns b up to its first NUL.
func cString(b []byte) string {
	s, _, _ := bytes.Cut(b, []byte{0})
	return string(s)
}

// field reads a key or value field: size bytes (the driver counts the
// NUL) within a field of max bytes, up to the first NUL.
func field(field []byte, size uint32) string {
	if int(size) < len(field) {
		field = field[:size]
	}
	return cString(field)
}

// putField writes s NUL-terminated into a field of max bytes and
// returns the size the driver expects (the NUL included).
func putField(field []byte, s string) uint32 {
	clear(field)
	n := copy(field[:len(field)-1], s)
	return uint32(n + 1)
}

// ReadChannel registers on the channel and serves the driver until the
// host has been quiet for quiet (or until limit has passed since the start:
// a host polling the auto pool every few seconds never goes quiet). It
// answers the host like hv_kvp_daemon would for the pools it has seen, and
// returns them.
func ReadChannel(ctx context.Context, ch Channel, quiet, limit time.Duration) (Pools, error) {
	reg := make([]byte, msgSize)
	reg[0] = opRegister1
	if err := ch.Send(reg); err != nil {
		return nil, fmt.Errorf("registering on %s: %w", Device, err)
	}
	pools := Pools{}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msg, err := ch.Recv(min(quiet, time.Until(deadline)))
		if errors.Is(err, ErrQuiet) {
			return pools, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", Device, err)
		}
		if len(msg) < offBody+4+offValue+maxValue {
			return nil, fmt.Errorf("reading %s: short message of %d bytes", Device, len(msg))
		}
		op, pool := msg[0], int(msg[1])
		if op == opRegister1 {
			// The driver's half of the handshake (its version string):
			// nothing to answer.
			continue
		}
		status := serve(pools, op, pool, msg)
		reply := bytes.Clone(msg)
		binary.NativeEndian.PutUint32(reply[0:], status)
		if err := ch.Send(reply); err != nil {
			return nil, fmt.Errorf("answering on %s: %w", Device, err)
		}
	}
	return pools, nil
}

// serve applies one host request to pools, filling msg's body for the
// requests that return data, and returns the status for the reply.
func serve(pools Pools, op byte, pool int, msg []byte) uint32 {
	ne := binary.NativeEndian
	if pool < 0 || pool >= poolCount {
		return statusFail
	}
	data := msg[offBody:]
	switch op {
	case opSet:
		key := field(data[offKey:offKey+maxKey], ne.Uint32(data[offKeySize:]))
		value := field(data[offValue:offValue+maxValue], ne.Uint32(data[offValueSize:]))
		if key == "" {
			return statusFail
		}
		pools.set(pool, key, value)
		return statusOK
	case opGet:
		key := field(data[offKey:offKey+maxKey], ne.Uint32(data[offKeySize:]))
		value, ok := pools.Get(pool, key)
		if !ok {
			return statusContinue
		}
		ne.PutUint32(data[offValueSize:], putField(data[offValue:offValue+maxValue], value))
		return statusOK
	case opDelete:
		// struct hv_kvp_msg_delete: key_size, key.
		key := field(data[4:4+maxKey], ne.Uint32(data[0:]))
		if !pools.del(pool, key) {
			return statusContinue
		}
		return statusOK
	case opEnumerate:
		// The auto pool is what hv_kvp_daemon computes about the guest
		// (FQDN, OS name, addresses); flint leaves that to the daemon
		// that runs later and answers "no more items".
		index := int(ne.Uint32(data[0:]))
		records := pools[pool]
		if pool == poolAuto || index >= len(records) {
			return statusContinue
		}
		d := data[4:]
		ne.PutUint32(d[offKeySize:], putField(d[offKey:offKey+maxKey], records[index].Key))
		ne.PutUint32(d[offValueSize:], putField(d[offValue:offValue+maxValue], records[index].Value))
		return statusOK
	case opGetIPInfo, opSetIPInfo:
		// IP injection is hv_kvp_daemon's business.
		return statusFail
	}
	return statusFail
}

// ParsePoolFile reads a pool file: whole 2560-byte records, each a
// NUL-terminated key and value.
func ParsePoolFile(data []byte) ([]Record, error) {
	if len(data)%recordSize != 0 {
		return nil, fmt.Errorf("pool file of %d bytes is not a whole number of %d-byte records", len(data), recordSize)
	}
	var records []Record
	for off := 0; off < len(data); off += recordSize {
		rec := data[off : off+recordSize]
		key := cString(rec[:maxKey])
		if key == "" {
			continue
		}
		records = append(records, Record{Key: key, Value: cString(rec[maxKey:])})
	}
	return records, nil
}

// EncodePoolFile writes records in the pool file format.
func EncodePoolFile(records []Record) []byte {
	out := make([]byte, recordSize*len(records))
	for i, r := range records {
		rec := out[i*recordSize:]
		putField(rec[:maxKey], r.Key)
		putField(rec[maxKey:recordSize], r.Value)
	}
	return out
}
