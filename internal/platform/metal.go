package platform

// Bare metal has no platform config source: a metal machine gets its
// config from the kernel command line (ignition.config.url, or
// ignition.config.device and ignition.config.path), from user.ign in
// /run/ignition, /etc/ignition or /usr/lib/ignition, or not at all. Those
// sources are tried before the platform provider, so this one only says
// "nothing more here".

import (
	"context"
	"fmt"
)

type metalProvider struct{}

// newMetal returns a provider that always answers ErrNoConfig: booting a
// metal machine without a config is an empty config, as in Ignition.
func newMetal(Env) Provider { return metalProvider{} }

func (metalProvider) FetchConfig(context.Context) ([]byte, error) {
	return nil, fmt.Errorf("metal: no platform config source (use ignition.config.url or ignition.config.device on the kernel command line): %w", ErrNoConfig)
}
