package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/flintboot/flint/internal/guestchan/hyperv"
)

// The hyperv platform reads the config from Hyper-V's key-value pair (KVP)
// exchange: the host adds KVP items to the guest's external pool (pool 0)
// with Msvm_KvpExchangeComponent / Add-VMKvpItem (or PowerShell around
// them), and the guest reads them. The config is the item "ignition.config",
// or, because an item's value is limited to 2048 bytes, the concatenation of
// "ignition.config.0", "ignition.config.1", … up to the first missing index
// (coreos/ignition internal/providers/hyperv/kvp.go).
//
// The items reach Linux through hv_utils' KVP channel, spoken by package
// guestchan/hyperv; when hv_kvp_daemon already holds the channel (EBUSY),
// flint reads pool 0 from the daemon's pool file instead; and since the
// host sends the pools only once per boot, the provider can hand the
// pools it read back as pool files (KVPPoolFiles). Nothing writes them to
// the target root: the files stage does not take them (docs/providers.md,
// "hyperv: pool files").

const (
	hvSingleKey   = "ignition.config"
	hvSplitPrefix = "ignition.config."
)

// hvConfig assembles the config from the external pool.
func hvConfig(pools hyperv.Pools) ([]byte, string) {
	if v, ok := pools.Get(hyperv.PoolExternal, hvSingleKey); ok && v != "" {
		return []byte(v), hvSingleKey
	}
	var config []byte
	n := 0
	for ; ; n++ {
		v, ok := pools.Get(hyperv.PoolExternal, hvSplitPrefix+strconv.Itoa(n))
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
	// openKVP opens the KVP channel (hyperv.Open).
	openKVP func(path string) (hyperv.Channel, error)
	// quiet and limit bound the wait for the host's items.
	quiet, limit time.Duration
	// pools is what the channel delivered, for KVPPoolFiles.
	pools hyperv.Pools
}

func newHyperV(env Env) Provider {
	return &hypervProvider{env: env, openKVP: hyperv.Open, quiet: 5 * time.Second, limit: time.Minute}
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
	dev := p.env.path(hyperv.Device)
	if err := waitForPath(ctx, dev, p.env.wait(10*time.Second)); err != nil {
		return nil, fmt.Errorf("hyperv: no %s (not a Hyper-V VM, or no KVP integration service): %w", hyperv.Device, err)
	}

	var pools hyperv.Pools
	ch, err := p.openKVP(dev)
	switch {
	case errors.Is(err, hyperv.ErrBusy):
		// hv_kvp_daemon is running and keeps the pools on disk.
		log.Info("the KVP channel is held by hv_kvp_daemon; reading its pool file", "file", fmt.Sprintf(hyperv.PoolFile, hyperv.PoolExternal))
		pools, err = p.readPoolFile(hyperv.PoolExternal)
		if err != nil {
			return nil, fmt.Errorf("hyperv: %w", err)
		}
	case errors.Is(err, hyperv.ErrUnsupported):
		return nil, fmt.Errorf("hyperv: %w: %w", err, ErrNoProvider)
	case err != nil:
		return nil, fmt.Errorf("hyperv: opening %s: %w", hyperv.Device, err)
	default:
		start := time.Now()
		pools, err = hyperv.ReadChannel(ctx, ch, p.quiet, p.limit)
		ch.Close()
		if err != nil {
			return nil, fmt.Errorf("hyperv: %w", err)
		}
		p.pools = pools
		log.Info("KVP items read", "items", len(pools[hyperv.PoolExternal]), "duration", time.Since(start))
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
func (p *hypervProvider) readPoolFile(pool int) (hyperv.Pools, error) {
	name := p.env.path(fmt.Sprintf(hyperv.PoolFile, pool))
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return hyperv.Pools{}, nil
	}
	if err != nil {
		return nil, err
	}
	records, err := hyperv.ParsePoolFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return hyperv.Pools{pool: records}, nil
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
		files[fmt.Sprintf(hyperv.PoolFile, id)] = hyperv.EncodePoolFile(p.pools[id])
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
