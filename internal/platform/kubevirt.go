package platform

// KubeVirt passes user-data on a disk the VM spec declares: a NoCloud
// volume (label cidata, /user-data) or a ConfigDrive volume (label
// config-2, OpenStack layout). A VM has one or the other, and may get it
// late, so flint waits for both and takes whichever appears first.

import (
	"context"
	"fmt"
)

type kubevirtProvider struct{ env Env }

// newKubeVirt reads the user config from a cidata or config-2 drive,
// waiting for one as long as the fetch may take (Ignition has no
// timeout). A drive without user-data is an empty config.
func newKubeVirt(env Env) Provider { return kubevirtProvider{env: env} }

func (p kubevirtProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	drive := func(label, relPath string) raceSource {
		return raceSource{
			name: fmt.Sprintf("config drive %s", label),
			fetch: func(ctx context.Context) ([]byte, error) {
				data, err := readDriveFile(ctx, p.env, []string{label}, relPath, p.env.wait(0))
				if err != nil {
					return nil, fmt.Errorf("kubevirt: %w", err)
				}
				return data, nil
			},
		}
	}
	return raceUserData(ctx, p.env, "kubevirt", []raceSource{
		drive("cidata", "/user-data"),
		drive("config-2", "/openstack/latest/user_data"),
	})
}
