package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strings"

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
	// names are Afterburn's without its prefix (AWS_INSTANCE_ID), or
	// flint's own, which Afterburn does not write, with FlintOnlyPrefix
	// (FLINT_GCP_ZONE).
	Attrs []Attribute
}

// FlintOnlyPrefix starts the name of an attribute Afterburn does not
// write: it is written under that name only, never as AFTERBURN_…, so
// the AFTERBURN_ names are exactly Afterburn's set.
const FlintOnlyPrefix = "FLINT_"

// Attribute is one KEY=VALUE line of the attributes file.
type Attribute struct{ Name, Value string }

// add appends the attribute when the service gave a value.
func (m *Metadata) add(name, value string) {
	if value != "" {
		m.Attrs = append(m.Attrs, Attribute{name, value})
	}
}

// addAddr adds the attribute name for a, unless a is not valid (none).
func (m *Metadata) addAddr(name string, a netip.Addr) {
	if a.IsValid() {
		m.add(name, a.String())
	}
}

// Host is what the agent side of a platform (metadata, check-in, failure
// report) needs from the machine: the config side's Env, whose fetcher,
// root, mounter and logger it shares, and what only the agent needs.
// Tests fill it with local fakes; the zero value of each optional field
// means the real thing.
type Host struct {
	// Env is the machine as the config providers see it: Getter makes
	// every metadata request (the same client, retries and timeouts as the
	// config's), Root prefixes every absolute path (DHCP leases, drives),
	// Mounter mounts config drives (nil: mount(2)), Wait replaces how long
	// a drive may take to appear, Logger is never nil. Endpoint, as for
	// the config side, replaces the base URL of every service the platform
	// has (Azure's IMDS and WireServer alike; CloudStack's virtual router,
	// found through DHCP otherwise).
	Env
	// ID is the platform's id; errors start with it.
	ID string
	// LocalPort picks the local TCP port of Scaleway requests, which the
	// service answers only from a privileged port; nil: random in 1–1023.
	LocalPort func() int
}

// endpoint returns the base URL of the platform's services: Env's
// override, the one way both sides address a platform, or def.
func (host *Host) endpoint(def string) string {
	return strings.TrimSuffix(host.Env.endpoint(def), "/")
}

// localPort returns the privileged local port for a Scaleway request.
func (host *Host) localPort() int {
	if host.LocalPort != nil {
		return host.LocalPort()
	}
	return 1 + rand.IntN(1023)
}

// get makes one request with the config side's habits (getMetadata):
// errors name the platform and the URL.
func (host *Host) get(ctx context.Context, r resource.Request) ([]byte, error) {
	return getMetadata(ctx, host.Env, host.ID, r)
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
