// Package platform is the home of every platform flint runs on, and of the
// other places a user config can come from: the kernel command line and the
// well-known user.ign locations. Each platform has one row in the table in
// platforms.go, its config provider in <id>.go and, where the agent does
// something there (metadata, check-in, failure report), <id>_agent.go;
// what several platforms share is in agent_*.go (EC2-style services,
// config drives, NoCloud drives, JSON and YAML documents) and metadata.go
// (user-data services). Both sides take their endpoints, device roots and
// fetcher from Env (the agent's Host embeds it), so tests run them against
// local fakes.
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

// Platform is one row of the platform table: an ignition.platform.id, how
// to make its provider, and what the agent does there.
type Platform struct {
	ID string
	// New makes the provider that reads the platform's config.
	New func(Env) Provider

	// What the agent does there, later in boot. A nil function means the
	// platform does not offer it; tests keep the agent's units' conditions
	// equal to these fields.

	// Hostname: the platform's DHCP gives no hostname, so `flint agent
	// hostname` sets it from metadata (Afterburn's list, coreos/afterburn
	// dracut/30afterburn/afterburn-hostname.service).
	Hostname bool
	// Metadata reads hostname, SSH keys and attributes.
	Metadata func(ctx context.Context, host *Host) (Metadata, error)
	// HostnameOnly, when set, reads just the hostname, from where the
	// platform keeps it apart from the rest (Azure Stack's identity
	// endpoint), so `flint agent hostname` does not make the whole,
	// costlier metadata exchange.
	HostnameOnly func(ctx context.Context, host *Host) (string, error)
	// Attributes, when set, adds attributes that only `flint agent
	// attributes` reads, from an exchange the other commands need not make
	// (Azure's load balancer address from WireServer).
	Attributes func(ctx context.Context, host *Host) ([]Attribute, error)
	// Fragments: `flint agent render-ignition` writes Ignition config
	// fragments (hostname, admin user and keys) from the metadata, as
	// Afterburn 5.11's render-ignition does on its platforms.
	Fragments bool
	// AdminPasswordHash, when set, returns the SHA-512 crypt hash of the
	// admin user's password ("" when the VM has none) for the user
	// fragment (Azure's, from the provisioning medium).
	AdminPasswordHash func(ctx context.Context, host *Host) (string, error)
	// CheckIn reports a good boot.
	CheckIn func(ctx context.Context, host *Host) error
	// ReportFailure reports a failed provisioning with a short, redacted
	// reason the operator sees in the cloud console.
	ReportFailure func(ctx context.Context, host *Host, reason string) error
}
