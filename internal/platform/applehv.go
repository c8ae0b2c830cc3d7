package platform

// Apple's Virtualization framework (vfkit, podman machine on macOS) serves
// the config over HTTP on a virtio socket: the host listens on vsock port
// 1024 and the guest connects to context ID 2, "the host"
// (VMADDR_CID_HOST, vsock(7)). The HTTP host name means nothing there.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/mdlayher/vsock"
)

// appleHVPort is the host's vsock port for the config.
const appleHVPort = 1024

type appleHVProvider struct {
	env Env
	// dial connects to the host's config server; tests dial a TCP
	// listener on 127.0.0.1 instead.
	dial func(ctx context.Context) (net.Conn, error)
}

// newAppleHV fetches the config with an HTTP GET over vsock to the host.
// An empty answer is an empty config.
func newAppleHV(env Env) Provider {
	return appleHVProvider{env: env, dial: dialAppleHVHost}
}

// dialAppleHVHost connects to the host's vsock port 1024.
func dialAppleHVHost(ctx context.Context) (net.Conn, error) {
	return vsock.DialContext(ctx, vsock.Host, appleHVPort, nil)
}

func (p appleHVProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "applehv")
	// The vsock core must be loaded (or built in) before a socket of its
	// family can be made; as Ignition, modprobe runs only when it is not
	// there yet.
	if _, err := os.Stat(p.env.path("/sys/devices/virtual/misc/vsock")); err != nil && p.env.Runner != nil {
		if _, err := p.env.Runner.Run(ctx, "modprobe", "vsock"); err != nil {
			return nil, fmt.Errorf("applehv: loading the vsock driver: %w", err)
		}
	}

	client := &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return p.dial(ctx)
			},
			DisableKeepAlives: true,
			Proxy:             nil, // never the environment's proxy: this is a local socket
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://vsock/", nil)
	if err != nil {
		return nil, fmt.Errorf("applehv: %w", err)
	}
	req.Header.Set("Accept", "application/json")

	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("applehv: GET over vsock (cid %d, port %d): %w", vsock.Host, appleHVPort, err)
	}
	defer resp.Body.Close()
	// Ignition takes whatever body comes back; an error page parsed
	// as a config would only fail later with a worse message.
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("applehv: host config server answered HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("applehv: reading the answer: %w", err)
	}
	if len(data) == 0 {
		log.Info("host sent an empty config: booting with an empty config")
		return nil, fmt.Errorf("applehv: empty answer from the host: %w", ErrNoConfig)
	}
	log.Info("fetched config over vsock", "bytes", len(data))
	return data, nil
}
