package platform

// Nutanix AHV always attaches an OpenStack-style config drive (label
// config-2), even when the VM was created without user-data.

import (
	"context"
	"fmt"
)

type nutanixProvider struct{ env Env }

// newNutanix reads /openstack/latest/user_data from the config-2 drive,
// waiting for it as long as the fetch may take (Ignition waits
// forever: the drive is always there). No user_data is an empty config.
func newNutanix(env Env) Provider { return nutanixProvider{env: env} }

func (p nutanixProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	return readPlatformDrive(ctx, p.env, "nutanix")
}

// readPlatformDrive reads /openstack/latest/user_data from the config-2
// drive for a platform whose drive is always attached (Nutanix, PowerVS):
// no wait limit but the context, or Env.Wait in tests.
func readPlatformDrive(ctx context.Context, env Env, platform string) ([]byte, error) {
	log := env.logger().With("platform", platform)
	data, err := readDriveFile(ctx, env, []string{"config-2"}, "/openstack/latest/user_data", env.wait(0))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", platform, err)
	}
	log.Info("read user-data from the config drive", "bytes", len(data))
	return data, nil
}
