// Package platform is the home of every platform flint runs on, and of the
// other places a user config can come from: the kernel command line and the
// well-known user.ign locations.
//
// The files layer from the contract up: provider.go is the config side's
// contract (Provider, Env), agent_metadata.go the agent side's (Host,
// Metadata), platforms.go the table, one Platform row per
// ignition.platform.id. Each platform has its config provider in <id>.go
// and, where the agent does something there (metadata, check-in, failure
// report), <id>_agent.go; what several platforms share is in agent_*.go
// (EC2-style services, config drives, NoCloud drives, JSON and YAML
// documents) and metadata.go (user-data services). Both sides take their
// endpoints, device roots and fetcher from Env (the agent's Host embeds
// it), so tests run them against local fakes.
//
// What is not about one platform lives beside the package: network
// descriptions (cloud-init's network config, OpenStack's network_data.json)
// are read by package netconfig, the hypervisors' guest channels (VMware's
// backdoor, Hyper-V's KVP, VirtualBox's vboxguest, QEMU's fw_cfg) are
// spoken by the packages under guestchan, and Azure Stack's certificates
// are opened by package wirecert.
//
// At about 7,000 lines it is larger than the ~4,000 a package should be,
// and stays one package on purpose: it is 31 platforms of about 200 lines
// each (and Afterburn's four agent-only provider names), every one a pair
// of files against one contract and one table.
// A package per platform would export the contract's helpers (the EC2-style
// and config-drive readers, the JSON and YAML document walkers) to 31
// importers and scatter the table; what is not per platform has already
// moved out (above).
//
// Family: config sources, platforms and agent (internal/README.md).
package platform

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// Provider reads the user config from one source.
type Provider interface {
	// FetchConfig returns the raw user config. It returns ErrNoConfig when
	// the source holds none (for most platforms absent or empty user-data
	// means an empty config, not a failure), ErrNoProvider when the machine
	// is not on this platform at all, or resource.ErrNeedNet when the
	// source needs the network and the fetcher is offline.
	FetchConfig(ctx context.Context) ([]byte, error)
}

// Getter makes metadata requests with the fetcher's retries and timeouts.
// *resource.Fetcher implements it.
type Getter interface {
	Get(ctx context.Context, r resource.Request) ([]byte, error)
}

// ConfigFetcher fetches a config a URL names (ignition.config.url).
// *resource.Fetcher implements it.
type ConfigFetcher interface {
	FetchConfig(ctx context.Context, res config.Resource) ([]byte, error)
}

// Mounter mounts and unmounts filesystems (config drives, read-only).
type Mounter interface {
	Mount(source, target, fstype string, flags uintptr, data string) error
	Unmount(target string) error
}

// Runner runs a command (modprobe, the z/VM reader tools) and returns its
// standard output; a failure carries argv, exit status and stderr.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Env is what a provider needs from the machine. Tests fill it with fakes.
type Env struct {
	Getter  Getter
	Fetcher ConfigFetcher
	// Root prefixes every absolute path a provider reads (/sys, /dev,
	// /proc, /run, /dev/disk/by-label); "" means the real root.
	Root string
	// Endpoint replaces a provider's metadata base URL (scheme://host[:port]);
	// "" means the platform's real address.
	Endpoint string
	Mounter  Mounter
	Runner   Runner
	Logger   *slog.Logger
	// Wait, when not 0, replaces how long a provider waits for a device or
	// drive to appear.
	Wait time.Duration
}

// path returns p (absolute) under env's root.
func (e Env) path(p string) string {
	if e.Root == "" {
		return p
	}
	return filepath.Join(e.Root, p)
}

// endpoint returns the metadata base URL to use: the override or def.
func (e Env) endpoint(def string) string {
	if e.Endpoint != "" {
		return e.Endpoint
	}
	return def
}

// wait returns how long to wait for a device: the override or def.
func (e Env) wait(def time.Duration) time.Duration {
	if e.Wait != 0 {
		return e.Wait
	}
	return def
}

// logger never returns nil.
func (e Env) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.New(slog.DiscardHandler)
}
