package platform

// Scaleway's metadata service hands user-data only to connections from a
// privileged source port (below 1024): only root, not any local user,
// can read an instance's secrets. flint therefore binds a random port in
// 1–1023 for the request, which needs CAP_NET_BIND_SERVICE (root in the
// initramfs has it). A port that is taken (a live connection, or one in
// TIME_WAIT from an earlier try) is replaced by another.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"

	"github.com/flintboot/flint/internal/resource"
)

// scalewayPortTries bounds how many privileged ports flint tries before
// giving up; with 1023 to choose from, a handful of collisions in a row
// means something else is wrong.
const scalewayPortTries = 16

type scalewayProvider struct {
	env Env
	url string
	// port picks the local port for each try: randomPrivilegedPort, or a
	// fixed sequence in tests.
	port func() int
}

// newScaleway reads the user config from the Scaleway metadata service. A
// 404 or an empty answer means no user-data: an empty config.
func newScaleway(env Env) Provider {
	return scalewayProvider{
		env:  env,
		url:  env.endpoint("http://169.254.42.42") + "/user_data/cloud-init",
		port: randomPrivilegedPort,
	}
}

// randomPrivilegedPort returns a port in 1–1023.
func randomPrivilegedPort() int { return 1 + rand.IntN(1023) }

func (p scalewayProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	r := resource.Request{URL: p.url}
	data, err := fromPrivilegedPort(p.env, p.port, &r, func() ([]byte, error) {
		return getMetadata(ctx, p.env, "scaleway", r)
	})
	if errors.Is(err, resource.ErrNotFound) {
		return nil, noUserData(p.env, "scaleway", r.URL, err)
	}
	if err != nil {
		return nil, err
	}
	return finishUserData(p.env, "scaleway", r.URL, data, nil)
}

// fromPrivilegedPort runs one request to Scaleway's metadata service from
// a privileged local port picked by pick, set in r before each try, and
// tries another port while the one picked is taken. The config side and
// the agent's (the instance document, the boot check-in) both go through
// it: a port in TIME_WAIT from an earlier request is as likely for either.
func fromPrivilegedPort(env Env, pick func() int, r *resource.Request, do func() ([]byte, error)) ([]byte, error) {
	var lastErr error
	for range scalewayPortTries {
		r.LocalPort = pick()
		data, err := do()
		switch {
		case errors.Is(err, syscall.EADDRINUSE), errors.Is(err, syscall.EADDRNOTAVAIL):
			env.logger().Debug("local port taken, trying another", "platform", "scaleway", "port", r.LocalPort)
			lastErr = err
			continue
		case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
			return nil, fmt.Errorf("scaleway: the metadata service needs a privileged source port, and binding one needs CAP_NET_BIND_SERVICE: %w", err)
		}
		return data, err
	}
	return nil, fmt.Errorf("scaleway: no free privileged local port after %d tries: %w", scalewayPortTries, lastErr)
}
