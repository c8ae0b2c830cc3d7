package platform

// IBM Power Virtual Server attaches an OpenStack-style config drive
// (label config-2): PowerVS is built on OpenStack.

import "context"

type powervsProvider struct{ env Env }

// newPowerVS reads /openstack/latest/user_data from the config-2 drive,
// waiting for it as long as the fetch may take (Ignition waits
// forever). No user_data is an empty config.
func newPowerVS(env Env) Provider { return powervsProvider{env: env} }

func (p powervsProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	return readPlatformDrive(ctx, p.env, "powervs")
}
