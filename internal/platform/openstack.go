package platform

// OpenStack offers the user-data in two places: on a config drive (a small
// filesystem labelled config-2) and from the Nova metadata service at
// 169.254.169.254, which single-stack IPv6 clouds serve at the link-local
// fe80::a9fe:a9fe instead (https://docs.openstack.org/nova/latest/user/metadata.html).
// A cloud may offer either or both, and nothing says which, so like the
// reference flint asks all of them at once and takes the first answer.
// Brightbox runs OpenStack and uses the same code.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

const (
	openstackUserDataPath = "/openstack/latest/user_data"
	// openstackLinkLocal is the metadata service's IPv6 address.
	openstackLinkLocal = "fe80::a9fe:a9fe"
	// raceDriveWait is how long OpenStack and CloudStack wait for a
	// config drive to appear. Ignition waits for ever; flint gives
	// it as long as the metadata service gets by default (-fetch-timeout),
	// so a machine with neither fails with a reason instead of hanging.
	raceDriveWait = 2 * time.Minute
)

// raceDriveLabels are the labels Nova and CloudStack give config drives:
// lower case on ISO 9660 and ext, upper case on VFAT.
var raceDriveLabels = []string{"config-2", "CONFIG-2"}

type openstackProvider struct {
	env      Env
	platform string
}

// newOpenStack reads the user config from the config drive or the metadata
// service, whichever answers first. A 404 from the metadata service, or a
// config drive without user_data, means no user-data: an empty config.
func newOpenStack(env Env) Provider {
	return openstackProvider{env: env, platform: "openstack"}
}

// newBrightbox is newOpenStack for Brightbox, which runs OpenStack.
func newBrightbox(env Env) Provider {
	return openstackProvider{env: env, platform: "brightbox"}
}

func (p openstackProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	sources := []raceSource{configDriveSource(p.env, openstackUserDataPath)}
	for _, u := range p.metadataURLs() {
		sources = append(sources, raceSource{
			name: "metadata service",
			fetch: func(ctx context.Context) ([]byte, error) {
				return getRaceUserData(ctx, p.env, u)
			},
		})
	}
	return raceUserData(ctx, p.env, p.platform, sources)
}

// metadataURLs lists the user-data URLs of the metadata service: the IPv4
// one, and the IPv6 link-local one on every interface that could reach it
// (a link-local address means nothing without its interface). With
// env.Endpoint set (tests) only the endpoint is asked.
func (p openstackProvider) metadataURLs() []string {
	if p.env.Endpoint != "" {
		return []string{p.env.Endpoint + openstackUserDataPath}
	}
	urls := []string{resource.LinkLocalMetadata + openstackUserDataPath}
	for _, iface := range linkLocalInterfaces(p.env) {
		u := url.URL{Scheme: "http", Host: "[" + openstackLinkLocal + "%" + iface + "]", Path: openstackUserDataPath}
		urls = append(urls, u.String())
	}
	return urls
}

// configDriveSource reads relPath from a config drive labelled config-2
// or CONFIG-2, waiting for one to appear.
func configDriveSource(env Env, relPath string) raceSource {
	return raceSource{
		name: "config drive",
		fetch: func(ctx context.Context) ([]byte, error) {
			return readDriveFile(ctx, env, raceDriveLabels, relPath, env.wait(raceDriveWait))
		},
	}
}

// getRaceUserData fetches one metadata user-data URL for a race: a 404 or
// an empty answer is ErrNoConfig, an answer that ends the race like a
// config does.
func getRaceUserData(ctx context.Context, env Env, rawURL string) ([]byte, error) {
	data, err := getMetadata(ctx, env, "metadata service", resource.Request{URL: rawURL})
	switch {
	case errors.Is(err, resource.ErrNotFound):
		return nil, fmt.Errorf("metadata service: %s: %w", config.DescribeURL(rawURL), ErrNoConfig)
	case err == nil && len(data) == 0:
		return nil, fmt.Errorf("metadata service: %s: user-data is empty: %w", config.DescribeURL(rawURL), ErrNoConfig)
	}
	return data, err
}

// Interface flags from <linux/if.h>, as /sys/class/net/<if>/flags shows
// them.
const (
	iffUp       = 0x1
	iffLoopback = 0x8
)

// ipv6ScopeLink is the link-local scope in /proc/net/if_inet6
// (IPV6_ADDR_LINKLOCAL in the kernel's include/net/ipv6.h).
const ipv6ScopeLink = 0x20

// linkLocalInterfaces returns the interfaces, in the kernel's order, that
// are up, are not loopback, and have an IPv6 link-local address: the ones
// a request to fe80::a9fe:a9fe can go out of. It reads
// /proc/net/if_inet6 (one line per address: address, ifindex, prefix
// length, scope, flags, name) and /sys/class/net/<if>/flags under env's
// root; without IPv6 there is no if_inet6 and no interface.
func linkLocalInterfaces(env Env) []string {
	data, err := os.ReadFile(env.path("/proc/net/if_inet6"))
	if err != nil {
		return nil
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 {
			continue
		}
		scope, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || scope != ipv6ScopeLink {
			continue
		}
		name := f[5]
		if strings.ContainsAny(name, "/]%") || slices.Contains(names, name) {
			continue
		}
		raw, err := os.ReadFile(env.path("/sys/class/net/" + name + "/flags"))
		if err != nil {
			continue
		}
		flags, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(raw)), "0x"), 16, 32)
		if err != nil || flags&iffUp == 0 || flags&iffLoopback != 0 {
			continue
		}
		names = append(names, name)
	}
	return names
}
