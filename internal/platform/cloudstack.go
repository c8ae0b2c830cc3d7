package platform

// Apache CloudStack offers the user-data on a config drive (labelled
// config-2, file cloudstack/userdata/user_data.txt) and from the virtual
// router, an EC2-style metadata service at the address of the DHCP server
// that leased the instance its address
// (https://docs.cloudstack.apache.org/en/latest/adminguide/virtual_machines/user-data.html).
// Like Ignition, flint asks both at once and takes the first answer,
// and finds the router in systemd-networkd's lease files.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"time"

	"github.com/flintboot/flint/internal/resource"

	"github.com/flintboot/flint/internal/dhcplease"
)

const (
	cloudstackDrivePath    = "/cloudstack/userdata/user_data.txt"
	cloudstackUserDataPath = "/latest/user-data"
	// leasePollInterval is how often Ignition looks for a lease
	// while networkd has none yet.
	leasePollInterval = 500 * time.Millisecond
)

// offliner is a Getter that knows it is offline (*resource.Fetcher).
type offliner interface {
	Offline() bool
}

// errNoLease means no DHCP lease naming a server appeared in time.
var errNoLease = errors.New("no DHCP lease with a server address")

type cloudstackProvider struct {
	env Env
}

// newCloudStack reads the user config from the config drive or the virtual
// router's metadata service, whichever answers first. A 404 from the
// metadata service, or a config drive without user_data.txt, means no
// user-data: an empty config.
func newCloudStack(env Env) Provider {
	return cloudstackProvider{env: env}
}

func (p cloudstackProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	return raceUserData(ctx, p.env, "cloudstack", []raceSource{
		configDriveSource(p.env, cloudstackDrivePath),
		{name: "metadata service", fetch: p.fetchMetadata},
	})
}

// fetchMetadata reads the user-data from the virtual router, once a DHCP
// lease has said where it is. With env.Endpoint set (tests) that is the
// router.
func (p cloudstackProvider) fetchMetadata(ctx context.Context) ([]byte, error) {
	base := p.env.Endpoint
	if base == "" {
		// In fetch-offline networkd holds no lease yet, and waiting for
		// one would only fail the stage: the fetch stage, with the
		// network up, runs the race again.
		if o, ok := p.env.Getter.(offliner); ok && o.Offline() {
			return nil, fmt.Errorf("metadata service: finding the virtual router (the DHCP server): %w", resource.ErrNeedNet)
		}
		addr, err := waitDHCPServer(ctx, p.env)
		if err != nil {
			return nil, fmt.Errorf("metadata service: finding the virtual router (the DHCP server): %w", err)
		}
		base = (&url.URL{Scheme: "http", Host: hostForURL(addr)}).String()
	}
	return getRaceUserData(ctx, p.env, base+cloudstackUserDataPath)
}

// hostForURL writes addr as a URL host: IPv6 in brackets.
func hostForURL(addr netip.Addr) string {
	if addr.Is6() {
		return "[" + addr.String() + "]"
	}
	return addr.String()
}

// waitDHCPServer waits, up to env.wait(raceDriveWait), for a lease file
// that names the DHCP server, and returns that server's address.
func waitDHCPServer(ctx context.Context, env Env) (netip.Addr, error) {
	var addr netip.Addr
	found := func() bool {
		var ok bool
		addr, ok = dhcpServerAddress(ctx, env)
		return ok
	}
	if found() {
		return addr, nil
	}
	wait := env.wait(raceDriveWait)
	env.logger().Info("waiting for a DHCP lease naming its server", "platform", "cloudstack", "timeout", wait)
	ok, err := pollUntil(ctx, wait, leasePollInterval, found)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("waiting for a DHCP lease: %w", err)
	}
	if !ok {
		return netip.Addr{}, fmt.Errorf("after %v (systemd-networkd, NetworkManager and dhclient leases): %w", wait, errNoLease)
	}
	return addr, nil
}

// dhcpServerAddress returns the server address of the first DHCP lease
// (systemd-networkd's by interface index, as Ignition walks interfaces,
// then dhclient's) that names one, else NetworkManager's
// dhcp_server_identifier over D-Bus, as Afterburn asks it.
func dhcpServerAddress(ctx context.Context, env Env) (netip.Addr, bool) {
	l, ok := dhcplease.Find(ctx, env.path, func(l dhcplease.Lease) bool { return l.Server.IsValid() })
	return l.Server, ok
}
