package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
)

// Getter makes metadata requests with bounded retries: network errors,
// 5xx and the request's RetryStatus are retried with a doubling backoff
// until the fetcher's total timeout, then fail with an error naming the
// URL and the last failure. *resource.Fetcher implements it.
type Getter interface {
	Get(ctx context.Context, r resource.Request) ([]byte, error)
}

// Deps is what the agent needs from the machine. Tests fill it with local
// fakes; the zero value of each optional field means the real thing.
type Deps struct {
	// Getter makes every metadata request; its total timeout bounds the
	// retries of each.
	Getter Getter
	// Logger receives the [started]/[finished]/[failed] lines and the
	// MESSAGE_ID events; nil discards them.
	Logger *slog.Logger
	// Root prefixes every absolute path the agent reads or writes
	// (/proc/cmdline, /run, /etc/passwd, home directories, DHCP leases);
	// "" means the real root.
	Root string
	// Endpoints replaces the base URL (scheme://host[:port]) of a
	// metadata service, by platform id ("azure" is IMDS; "wireserver" is
	// Azure's WireServer, found through DHCP otherwise).
	Endpoints map[string]string
	// LocalPort picks the local TCP port of Scaleway requests, which the
	// service answers only from a privileged port; nil: random in 1–1023.
	LocalPort func() int
	// Mounter mounts config drives read-only; nil: mount(2).
	Mounter platform.Mounter
	// DriveWait, when not 0, replaces how long a config drive may take to
	// appear.
	DriveWait time.Duration
	// NewProvider makes the config provider whose DeleteConfig removes the
	// config from the hypervisor; nil: the providers package's table.
	NewProvider func(id string, env platform.Env) (platform.Provider, bool)
}

// Agent runs the agent's commands for one platform.
type Agent struct {
	d        Deps
	log      *slog.Logger
	platform duties
}

// New returns the agent for the platform with id (an
// ignition.platform.id).
func New(d Deps, id string) (*Agent, error) {
	p, ok := lookup(id)
	if !ok {
		return nil, fmt.Errorf("platform %q: %w", id, ErrUnknownPlatform)
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Agent{d: d, log: log.With("platform", id), platform: p}, nil
}

// Platform returns the agent's platform id.
func (a *Agent) Platform() string { return a.platform.id }

// path returns p (absolute) under the agent's root.
func (a *Agent) path(p string) string {
	if a.d.Root == "" {
		return p
	}
	return filepath.Join(a.d.Root, p)
}

// endpoint returns the base URL of service: the override or def.
func (a *Agent) endpoint(service, def string) string {
	if u := a.d.Endpoints[service]; u != "" {
		return strings.TrimSuffix(u, "/")
	}
	return def
}

// localPort returns the privileged local port for a Scaleway request.
func (a *Agent) localPort() int {
	if a.d.LocalPort != nil {
		return a.d.LocalPort()
	}
	return 1 + rand.IntN(1023)
}

// get makes one request and returns the answer's body; errors name the
// platform and the URL.
func (a *Agent) get(ctx context.Context, r resource.Request) ([]byte, error) {
	if a.d.Getter == nil {
		return nil, fmt.Errorf("%s: %s: no fetcher configured", a.platform.id, r.URL)
	}
	data, err := a.d.Getter.Get(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.platform.id, err)
	}
	return data, nil
}

// getText returns a metadata value as text without surrounding blanks;
// "" when the service says it does not exist (404): absent values are
// normal (no public address, no keys).
func (a *Agent) getText(ctx context.Context, url string, h http.Header) (string, error) {
	data, err := a.get(ctx, resource.Request{URL: url, Header: h})
	if errors.Is(err, resource.ErrNotFound) {
		return "", nil
	}
	return strings.TrimSpace(string(data)), err
}

// getJSON decodes the JSON answer of one request into v.
func (a *Agent) getJSON(ctx context.Context, r resource.Request, v any) error {
	data, err := a.get(ctx, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %s: decoding the answer: %w: %w", a.platform.id, r.URL, ErrProtocol, err)
	}
	return nil
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
