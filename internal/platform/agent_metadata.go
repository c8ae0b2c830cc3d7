package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// Metadata is what a platform's metadata service says about the instance.
type Metadata struct {
	Hostname string
	// AdminUser is the user the platform's console created the instance
	// for (Azure's osProfile.adminUsername), "" when it names none.
	AdminUser string
	// Keys are SSH public keys, one authorized_keys line each.
	Keys []string
	// Attrs are the instance's attributes in the order they are written;
	// names are Afterburn's without its prefix (AWS_INSTANCE_ID).
	Attrs []Attribute
}

// Attribute is one KEY=VALUE line of the attributes file.
type Attribute struct{ Name, Value string }

// add appends the attribute when the service gave a value.
func (m *Metadata) add(name, value string) {
	if value != "" {
		m.Attrs = append(m.Attrs, Attribute{name, value})
	}
}

// Host is what the agent side of a platform (metadata, check-in, failure
// report) needs from the machine. Tests fill it with local fakes; the
// zero value of each optional field means the real thing.
type Host struct {
	// ID is the platform's id; errors start with it.
	ID string
	// Getter makes every metadata request, with the same client, retries
	// and timeouts as the config side (*resource.Fetcher).
	Getter Getter
	// Logger receives what the platform code has to say; never nil.
	Logger *slog.Logger
	// Root prefixes every absolute path read or written (DHCP leases,
	// drives); "" means the real root.
	Root string
	// Endpoints replaces the base URL (scheme://host[:port]) of a
	// metadata service, by platform id ("azure" is IMDS; "wireserver" is
	// Azure's WireServer, found through DHCP otherwise).
	Endpoints map[string]string
	// LocalPort picks the local TCP port of Scaleway requests, which the
	// service answers only from a privileged port; nil: random in 1–1023.
	LocalPort func() int
	// Mounter mounts config drives read-only; nil: mount(2).
	Mounter Mounter
	// DriveWait, when not 0, replaces how long a config drive may take to
	// appear.
	DriveWait time.Duration
}

// path returns p (absolute) under the host's root.
func (host *Host) path(p string) string {
	if host.Root == "" {
		return p
	}
	return filepath.Join(host.Root, p)
}

// endpoint returns the base URL of service: the override or def.
func (host *Host) endpoint(service, def string) string {
	if u := host.Endpoints[service]; u != "" {
		return strings.TrimSuffix(u, "/")
	}
	return def
}

// localPort returns the privileged local port for a Scaleway request.
func (host *Host) localPort() int {
	if host.LocalPort != nil {
		return host.LocalPort()
	}
	return 1 + rand.IntN(1023)
}

// get makes one request and returns the answer's body; errors name the
// platform and the URL.
func (host *Host) get(ctx context.Context, r resource.Request) ([]byte, error) {
	if host.Getter == nil {
		return nil, fmt.Errorf("%s: %s: no fetcher configured", host.ID, r.URL)
	}
	data, err := host.Getter.Get(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", host.ID, err)
	}
	return data, nil
}

// getText returns a metadata value as text without surrounding blanks;
// "" when the service says it does not exist (404): absent values are
// normal (no public address, no keys).
func (host *Host) getText(ctx context.Context, url string, h http.Header) (string, error) {
	data, err := host.get(ctx, resource.Request{URL: url, Header: h})
	if errors.Is(err, resource.ErrNotFound) {
		return "", nil
	}
	return strings.TrimSpace(string(data)), err
}

// getJSON decodes the JSON answer of one request into v.
func (host *Host) getJSON(ctx context.Context, r resource.Request, v any) error {
	data, err := host.get(ctx, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %s: decoding the answer: %w: %w", host.ID, r.URL, ErrProtocol, err)
	}
	return nil
}
