package platform

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"
)

// The hyperv platform reads the config from Hyper-V's key-value pair (KVP)
// exchange: the host adds KVP items to the guest's external pool (pool 0)
// with Msvm_KvpExchangeComponent / Add-VMKvpItem (or PowerShell around
// them), and the guest reads them. The config is the item "ignition.config",
// or, because an item's value is limited to 2048 bytes, the concatenation of
// "ignition.config.0", "ignition.config.1", … up to the first missing index
// (coreos/ignition internal/providers/hyperv/kvp.go).
//
// The items reach Linux through the hv_utils driver: /dev/vmbus/hv_kvp is
// the channel hv_kvp_daemon normally holds. A reader registers
// (KVP_OP_REGISTER1), and the driver then forwards every host request as a
// struct hv_kvp_msg (<linux/hyperv.h>) and waits for the reply; the host
// pushes the external pool as KVP_OP_SET messages right after registration.
// There is no end-of-pool message: the pool is complete when the host has
// been quiet for a while. libhvee, which Ignition uses, polls for 1 s
// (containers/libhvee pkg/kvp/config.go, Timeout); flint waits 5 s, so a
// slow host's late items are not cut off.
//
// hv_kvp_daemon stores the pools in /var/lib/hyperv/.kvp_pool_<n>, arrays
// of 512-byte key + 2048-byte value records. When the daemon already holds
// the channel (EBUSY), flint reads pool 0 from that file instead; and since
// the host sends the pools only once per boot, the provider can hand the
// pools it read back as pool files (KVPPoolFiles). Nothing writes them to
// the target root: the files stage does not take them (docs/providers.md,
// "hyperv: pool files").

const (
	hvKVPDevice   = "/dev/vmbus/hv_kvp"
	hvKVPPoolFile = "/var/lib/hyperv/.kvp_pool_%d"

	hvSingleKey   = "ignition.config"
	hvSplitPrefix = "ignition.config."

	// <linux/hyperv.h>
	hvKVPMaxKey   = 512  // HV_KVP_EXCHANGE_MAX_KEY_SIZE
	hvKVPMaxValue = 2048 // HV_KVP_EXCHANGE_MAX_VALUE_SIZE
	// hvKVPMsgSize is sizeof(struct hv_kvp_msg): the 4-byte header/error
	// union and the body union, whose largest member is struct
	// hv_kvp_ipaddr_value (2*128 + 1 + 1 + 2*1024 + 2*1024 + 2*512 +
	// 2*1024 = 7426 bytes); everything is packed.
	hvKVPMsgSize = 4 + 7426
	// hvKVPRecordSize is struct kvp_record in hv_kvp_daemon: the layout of
	// the pool files.
	hvKVPRecordSize = hvKVPMaxKey + hvKVPMaxValue

	kvpOpGet         = 0
	kvpOpSet         = 1
	kvpOpDelete      = 2
	kvpOpEnumerate   = 3
	kvpOpGetIPInfo   = 4
	kvpOpSetIPInfo   = 5
	kvpOpRegister1   = 100
	kvpPoolExternal  = 0
	kvpPoolAuto      = 2
	kvpPoolCount     = 5
	hvStatusOK       = 0x00000000
	hvStatusFail     = 0x80004005 // HV_E_FAIL
	hvStatusContinue = 0x80070103 // HV_S_CONT: "no such item" / "no more items"

	// Offsets in struct hv_kvp_msg.
	hvOffBody = 4
	// struct hv_kvp_exchg_msg_value within kvp_set/kvp_get (body + 0)
	// and kvp_enum_data (body + 4, after the index).
	hvOffValueType = 0
	hvOffKeySize   = 4
	hvOffValueSize = 8
	hvOffKey       = 12
	hvOffValue     = 12 + hvKVPMaxKey
)

// errKVPQuiet is what a kvpChannel returns when no message arrived in time.
var errKVPQuiet = errors.New("no KVP message")

// errKVPBusy means another process (hv_kvp_daemon) holds the KVP channel.
var errKVPBusy = errors.New("the KVP channel is held by another process (hv_kvp_daemon)")

// kvpChannel is an open /dev/vmbus/hv_kvp.
type kvpChannel interface {
	// recv returns the next message from the driver, or errKVPQuiet when
	// none arrives within timeout.
	recv(timeout time.Duration) ([]byte, error)
	// send writes one message (a reply, or the registration).
	send(msg []byte) error
	close() error
}

// kvpRecord is one KVP item.
type kvpRecord struct {
	key, value string
}

// kvpPools holds the items of each pool in the order they arrived.
type kvpPools map[int][]kvpRecord

func (p kvpPools) get(pool int, key string) (string, bool) {
	for _, r := range p[pool] {
		if r.key == key {
			return r.value, true
		}
	}
	return "", false
}

func (p kvpPools) set(pool int, key, value string) {
	for i, r := range p[pool] {
		if r.key == key {
			p[pool][i].value = value
			return
		}
	}
	p[pool] = append(p[pool], kvpRecord{key: key, value: value})
}

func (p kvpPools) del(pool int, key string) bool {
	for i, r := range p[pool] {
		if r.key == key {
			p[pool] = append(p[pool][:i:i], p[pool][i+1:]...)
			return true
		}
	}
	return false
}

// kvpCString returns b up to its first NUL.
func kvpCString(b []byte) string {
	s, _, _ := bytes.Cut(b, []byte{0})
	return string(s)
}

// kvpString reads a key or value field: size bytes (the driver counts the
// NUL) within a field of max bytes, up to the first NUL.
func kvpString(field []byte, size uint32) string {
	if int(size) < len(field) {
		field = field[:size]
	}
	return kvpCString(field)
}

// putKVPString writes s NUL-terminated into a field of max bytes and
// returns the size the driver expects (the NUL included).
func putKVPString(field []byte, s string) uint32 {
	clear(field)
	n := copy(field[:len(field)-1], s)
	return uint32(n + 1)
}

// readKVPChannel registers on the channel and serves the driver until the
// host has been quiet for quiet (or until limit has passed since the start:
// a host polling the auto pool every few seconds never goes quiet). It
// answers the host like hv_kvp_daemon would for the pools it has seen, and
// returns them.
func readKVPChannel(ctx context.Context, ch kvpChannel, quiet, limit time.Duration) (kvpPools, error) {
	reg := make([]byte, hvKVPMsgSize)
	reg[0] = kvpOpRegister1
	if err := ch.send(reg); err != nil {
		return nil, fmt.Errorf("registering on %s: %w", hvKVPDevice, err)
	}
	pools := kvpPools{}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msg, err := ch.recv(min(quiet, time.Until(deadline)))
		if errors.Is(err, errKVPQuiet) {
			return pools, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", hvKVPDevice, err)
		}
		if len(msg) < hvOffBody+4+hvOffValue+hvKVPMaxValue {
			return nil, fmt.Errorf("reading %s: short message of %d bytes", hvKVPDevice, len(msg))
		}
		op, pool := msg[0], int(msg[1])
		if op == kvpOpRegister1 {
			// The driver's half of the handshake (its version string):
			// nothing to answer.
			continue
		}
		status := serveKVP(pools, op, pool, msg)
		reply := bytes.Clone(msg)
		binary.NativeEndian.PutUint32(reply[0:], status)
		if err := ch.send(reply); err != nil {
			return nil, fmt.Errorf("answering on %s: %w", hvKVPDevice, err)
		}
	}
	return pools, nil
}

// serveKVP applies one host request to pools, filling msg's body for the
// requests that return data, and returns the status for the reply.
func serveKVP(pools kvpPools, op byte, pool int, msg []byte) uint32 {
	ne := binary.NativeEndian
	if pool < 0 || pool >= kvpPoolCount {
		return hvStatusFail
	}
	data := msg[hvOffBody:]
	switch op {
	case kvpOpSet:
		key := kvpString(data[hvOffKey:hvOffKey+hvKVPMaxKey], ne.Uint32(data[hvOffKeySize:]))
		value := kvpString(data[hvOffValue:hvOffValue+hvKVPMaxValue], ne.Uint32(data[hvOffValueSize:]))
		if key == "" {
			return hvStatusFail
		}
		pools.set(pool, key, value)
		return hvStatusOK
	case kvpOpGet:
		key := kvpString(data[hvOffKey:hvOffKey+hvKVPMaxKey], ne.Uint32(data[hvOffKeySize:]))
		value, ok := pools.get(pool, key)
		if !ok {
			return hvStatusContinue
		}
		ne.PutUint32(data[hvOffValueSize:], putKVPString(data[hvOffValue:hvOffValue+hvKVPMaxValue], value))
		return hvStatusOK
	case kvpOpDelete:
		// struct hv_kvp_msg_delete: key_size, key.
		key := kvpString(data[4:4+hvKVPMaxKey], ne.Uint32(data[0:]))
		if !pools.del(pool, key) {
			return hvStatusContinue
		}
		return hvStatusOK
	case kvpOpEnumerate:
		// The auto pool is what hv_kvp_daemon computes about the guest
		// (FQDN, OS name, addresses); flint leaves that to the daemon
		// that runs later and answers "no more items".
		index := int(ne.Uint32(data[0:]))
		records := pools[pool]
		if pool == kvpPoolAuto || index >= len(records) {
			return hvStatusContinue
		}
		d := data[4:]
		ne.PutUint32(d[hvOffKeySize:], putKVPString(d[hvOffKey:hvOffKey+hvKVPMaxKey], records[index].key))
		ne.PutUint32(d[hvOffValueSize:], putKVPString(d[hvOffValue:hvOffValue+hvKVPMaxValue], records[index].value))
		return hvStatusOK
	case kvpOpGetIPInfo, kvpOpSetIPInfo:
		// IP injection is hv_kvp_daemon's business.
		return hvStatusFail
	}
	return hvStatusFail
}

// parseKVPPoolFile reads a pool file: whole 2560-byte records, each a
// NUL-terminated key and value.
func parseKVPPoolFile(data []byte) ([]kvpRecord, error) {
	if len(data)%hvKVPRecordSize != 0 {
		return nil, fmt.Errorf("pool file of %d bytes is not a whole number of %d-byte records", len(data), hvKVPRecordSize)
	}
	var records []kvpRecord
	for off := 0; off < len(data); off += hvKVPRecordSize {
		rec := data[off : off+hvKVPRecordSize]
		key := kvpCString(rec[:hvKVPMaxKey])
		if key == "" {
			continue
		}
		records = append(records, kvpRecord{key: key, value: kvpCString(rec[hvKVPMaxKey:])})
	}
	return records, nil
}

// encodeKVPPoolFile writes records in the pool file format.
func encodeKVPPoolFile(records []kvpRecord) []byte {
	out := make([]byte, hvKVPRecordSize*len(records))
	for i, r := range records {
		rec := out[i*hvKVPRecordSize:]
		putKVPString(rec[:hvKVPMaxKey], r.key)
		putKVPString(rec[hvKVPMaxKey:hvKVPRecordSize], r.value)
	}
	return out
}

// hvConfig assembles the config from the external pool.
func hvConfig(pools kvpPools) ([]byte, string) {
	if v, ok := pools.get(kvpPoolExternal, hvSingleKey); ok && v != "" {
		return []byte(v), hvSingleKey
	}
	var config []byte
	n := 0
	for ; ; n++ {
		v, ok := pools.get(kvpPoolExternal, hvSplitPrefix+strconv.Itoa(n))
		if !ok {
			break
		}
		config = append(config, v...)
	}
	if n == 0 {
		return nil, ""
	}
	return config, fmt.Sprintf("%s0..%d", hvSplitPrefix, n-1)
}

// hypervProvider reads the config from the Hyper-V KVP external pool.
type hypervProvider struct {
	env Env
	// openKVP opens the KVP channel (hyperv_linux.go).
	openKVP func(path string) (kvpChannel, error)
	// quiet and limit bound the wait for the host's items.
	quiet, limit time.Duration
	// pools is what the channel delivered, for KVPPoolFiles.
	pools kvpPools
}

func newHyperV(env Env) Provider {
	return &hypervProvider{env: env, openKVP: openKVPChannel, quiet: 5 * time.Second, limit: time.Minute}
}

// FetchConfig returns the config from KVP pool 0; ErrNoConfig when the host
// set neither ignition.config nor ignition.config.0.
func (p *hypervProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("op", "hyperv kvp")
	// The channel is hv_utils' (hv_kvp); in an initramfs nothing else
	// loads it.
	if p.env.Runner != nil {
		if _, err := p.env.Runner.Run(ctx, "modprobe", "hv_utils"); err != nil {
			return nil, fmt.Errorf("hyperv: loading hv_utils: %w", err)
		}
	}
	dev := p.env.path(hvKVPDevice)
	if err := waitForPath(ctx, dev, p.env.wait(10*time.Second)); err != nil {
		return nil, fmt.Errorf("hyperv: no %s (not a Hyper-V VM, or no KVP integration service): %w", hvKVPDevice, err)
	}

	var pools kvpPools
	ch, err := p.openKVP(dev)
	switch {
	case errors.Is(err, errKVPBusy):
		// hv_kvp_daemon is running and keeps the pools on disk.
		log.Info("the KVP channel is held by hv_kvp_daemon; reading its pool file", "file", fmt.Sprintf(hvKVPPoolFile, kvpPoolExternal))
		pools, err = p.readPoolFile(kvpPoolExternal)
		if err != nil {
			return nil, fmt.Errorf("hyperv: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("hyperv: opening %s: %w", hvKVPDevice, err)
	default:
		start := time.Now()
		pools, err = readKVPChannel(ctx, ch, p.quiet, p.limit)
		ch.close()
		if err != nil {
			return nil, fmt.Errorf("hyperv: %w", err)
		}
		p.pools = pools
		log.Info("KVP items read", "items", len(pools[kvpPoolExternal]), "duration", time.Since(start))
	}

	config, source := hvConfig(pools)
	if len(config) == 0 {
		log.Info("no config in KVP pool 0", "keys", hvSingleKey+", "+hvSplitPrefix+"0…")
		return nil, ErrNoConfig
	}
	log.Info("config read", "source", source, "bytes", len(config))
	return config, nil
}

// readPoolFile reads /var/lib/hyperv/.kvp_pool_<pool> under the root.
func (p *hypervProvider) readPoolFile(pool int) (kvpPools, error) {
	name := p.env.path(fmt.Sprintf(hvKVPPoolFile, pool))
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return kvpPools{}, nil
	}
	if err != nil {
		return nil, err
	}
	records, err := parseKVPPoolFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return kvpPools{pool: records}, nil
}

// KVPPoolFiles returns the pool files, by absolute path in the target root,
// for the pools FetchConfig read from the channel: what a stage would write
// where hv_kvp_daemon keeps them, since the host sends the pools once per
// boot and flint consumed them. Their mode is to be 0600, not the daemon's
// 0644: pool 0 holds the config, which can hold secrets (Ignition writes
// them so, and hv_kvp_daemon keeps an existing file's mode). No stage
// writes them today (docs/providers.md, "hyperv: pool files").
func (p *hypervProvider) KVPPoolFiles() map[string][]byte {
	if p.pools == nil {
		return nil
	}
	ids := make([]int, 0, len(p.pools))
	for id := range p.pools {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	files := make(map[string][]byte, len(ids))
	for _, id := range ids {
		files[fmt.Sprintf(hvKVPPoolFile, id)] = encodeKVPPoolFile(p.pools[id])
	}
	return files
}

// waitForPath polls for path until it exists or wait has passed.
func waitForPath(ctx context.Context, path string, wait time.Duration) error {
	var statErr error
	ok, err := pollUntil(ctx, wait, 100*time.Millisecond, func() bool {
		_, statErr = os.Stat(path)
		return statErr == nil
	})
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: %w", statErr, ErrNoProvider)
	}
	return nil
}
