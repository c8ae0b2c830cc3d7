package providers

// Apache CloudStack offers the user-data on a config drive (labelled
// config-2, file cloudstack/userdata/user_data.txt) and from the virtual
// router, an EC2-style metadata service at the address of the DHCP server
// that leased the instance its address
// (https://docs.cloudstack.apache.org/en/latest/adminguide/virtual_machines/user-data.html).
// Like the reference, flint asks both at once and takes the first answer,
// and finds the router in systemd-networkd's lease files.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

const (
	cloudstackDrivePath    = "/cloudstack/userdata/user_data.txt"
	cloudstackUserDataPath = "/latest/user-data"
	// networkdLeaseDir is where systemd-networkd keeps one file per interface
	// (named by ifindex) with the DHCPv4 lease it holds.
	networkdLeaseDir = "/run/systemd/netif/leases"
	// leasePollInterval is how often the reference looks for a lease
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
		addr, ok = dhcpServerAddress(env)
		return ok
	}
	if found() {
		return addr, nil
	}
	wait := env.wait(raceDriveWait)
	env.logger().Info("waiting for a DHCP lease", "platform", "cloudstack", "dir", env.path(networkdLeaseDir), "timeout", wait)
	ok, err := pollUntil(ctx, wait, leasePollInterval, found)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("waiting for a DHCP lease in %s: %w", networkdLeaseDir, err)
	}
	if !ok {
		return netip.Addr{}, fmt.Errorf("%s after %v: %w", networkdLeaseDir, wait, errNoLease)
	}
	return addr, nil
}

// dhcpServerAddress returns the SERVER_ADDRESS of the first lease file
// (by interface index, as the reference walks interfaces) that has a
// valid one.
func dhcpServerAddress(env Env) (netip.Addr, bool) {
	entries, err := os.ReadDir(env.path(networkdLeaseDir))
	if err != nil {
		return netip.Addr{}, false
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, compareIfindex)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(env.path(networkdLeaseDir), name))
		if err != nil {
			continue
		}
		if addr, ok := leaseServerAddress(data); ok {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

// compareIfindex orders lease file names numerically (they are interface
// indexes), anything else after them by name.
func compareIfindex(a, b string) int {
	ia, errA := strconv.Atoi(a)
	ib, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return ia - ib
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// leaseServerAddress reads SERVER_ADDRESS=<ip> from a systemd-networkd
// lease file (KEY=VALUE lines).
func leaseServerAddress(data []byte) (netip.Addr, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || key != "SERVER_ADDRESS" {
			continue
		}
		addr, err := netip.ParseAddr(value)
		if err != nil || addr.Zone() != "" {
			return netip.Addr{}, false
		}
		return addr, true
	}
	return netip.Addr{}, false
}
