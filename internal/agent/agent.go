package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/platform"
)

// Deps is what the agent needs from the machine. Tests fill it with local
// fakes; the zero value of each optional field means the real thing.
type Deps struct {
	// Getter makes every metadata request; its total timeout bounds the
	// retries of each.
	Getter platform.Getter
	// Logger receives the [started]/[finished]/[failed] lines and the
	// MESSAGE_ID events; nil discards them.
	Logger *slog.Logger
	// Root prefixes every absolute path the agent reads or writes
	// (/proc/cmdline, /run, /etc/passwd, home directories, DHCP leases);
	// "" means the real root.
	Root string
	// Endpoint replaces the base URL (scheme://host[:port]) of the
	// platform's metadata services, as platform.Env's does for the config
	// side: every service of the platform (Azure's IMDS and WireServer
	// alike) is then at that one address; "" means the real ones.
	Endpoint string
	// LocalPort picks the local TCP port of Scaleway requests, which the
	// service answers only from a privileged port; nil: random in 1–1023.
	LocalPort func() int
	// Mounter mounts config drives read-only; nil: mount(2).
	Mounter platform.Mounter
	// DriveWait, when not 0, replaces how long a config drive may take to
	// appear.
	DriveWait time.Duration
	// NewProvider makes the config provider whose DeleteConfig removes the
	// config from the hypervisor; nil: the platform's row of the table.
	NewProvider func(id string, env platform.Env) (platform.Provider, bool)
	// AdminPasswordHash returns the admin password's hash for the user
	// fragment; nil: the platform's row of the table (Azure reads the
	// provisioning medium, which tests cannot attach).
	AdminPasswordHash func(ctx context.Context, host *platform.Host) (string, error)
	// KeysName is the file in ~USER/.ssh/authorized_keys.d that SSHKeys
	// writes; "" is flint. Afterburn's front end passes afterburn, the
	// file Afterburn writes (coreos/afterburn src/providers/mod.rs,
	// write_ssh_keys).
	KeysName string
	// AttrPrefixes are the prefixes Attributes writes each attribute
	// under, in order; nil is FLINT_ then AFTERBURN_. Afterburn's front
	// end passes AFTERBURN_ alone, as Afterburn writes.
	AttrPrefixes []string
	// AfterburnNetwork makes WriteNetwork write only what Afterburn
	// writes: not the platform's FlintNetwork links. Afterburn's front
	// end sets it.
	AfterburnNetwork bool
	// KeysMessageIDs are the MESSAGE_IDs of the journal entries for keys
	// written and removed; zero is flint's (MsgKeysWritten,
	// MsgKeysRemoved). Afterburn's front end passes Afterburn's, which
	// distro helpers match (MsgAfterburnKeysWritten, …Removed).
	KeysMessageIDs [2]string
}

// Agent runs the agent's commands for one platform: the platform's row
// of the table and what its functions need from the machine.
type Agent struct {
	d        Deps
	log      *slog.Logger
	platform platform.Platform
}

// New returns the agent for the platform with id (an
// ignition.platform.id).
func New(d Deps, id string) (*Agent, error) {
	p, ok := platform.LookupAgent(id)
	if !ok {
		return nil, fmt.Errorf("platform %q: %w", id, ErrUnknownPlatform)
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Agent{d: d, log: log.With("platform", id), platform: p}, nil
}

// host is what the platform's functions run against: the agent's
// dependencies.
func (a *Agent) host() *platform.Host {
	return &platform.Host{
		Env: platform.Env{Getter: a.d.Getter, Logger: a.log, Root: a.d.Root, Endpoint: a.d.Endpoint, Mounter: a.d.Mounter, Wait: a.d.DriveWait},
		ID:  a.platform.ID, LocalPort: a.d.LocalPort,
	}
}

// Platform returns the agent's platform id.
func (a *Agent) Platform() string { return a.platform.ID }

// path returns p (absolute) under the agent's root.
func (a *Agent) path(p string) string {
	if a.d.Root == "" {
		return p
	}
	return filepath.Join(a.d.Root, p)
}

// PlatformID finds the platform the machine runs on when -platform does
// not name it: PLATFORM_ID in /run/flint.env (or Ignition's
// /run/ignition.env), which the initramfs writes, then
// ignition.platform.id on the kernel command line. root prefixes the
// paths ("" is /).
func PlatformID(root string) (string, error) {
	for _, f := range []string{"/run/flint.env", "/run/ignition.env"} {
		if id := envFileValue(filepath.Join(root, f), "PLATFORM_ID"); id != "" {
			return id, nil
		}
	}
	args, err := platform.ReadCmdline(platform.Env{Root: root}, "")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoPlatform, err)
	}
	if id := args.PlatformID(); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("%w: not in /run/flint.env nor on the kernel command line (%s)", ErrNoPlatform, platform.ArgPlatformID)
}

// envFileValue returns KEY's value in an environment file of KEY=VALUE
// lines (quotes around the value dropped), "" when absent or unreadable.
func envFileValue(path, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && k == key {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
