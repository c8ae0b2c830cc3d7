package platform

// Azure Stack Hub has no user-data in its instance metadata service: the
// custom data comes only on the provisioning CD-ROM, which may be UDF or
// ISO 9660 there (azure_ovf.go).

import (
	"context"
	"errors"
	"fmt"
)

type azurestackProvider struct {
	env    Env
	status driveStatusFunc // the CDROM_DRIVE_STATUS ioctl; tests fake it
}

// newAzureStack reads CustomData.bin from the provisioning CD-ROM (the
// same search as readAzureOVFCustomData), waiting
// for the medium as long as the fetch may take, as Ignition does. A
// medium without custom data is an empty config.
func newAzureStack(env Env) Provider {
	return azurestackProvider{env: env, status: cdromDriveStatus}
}

func (p azurestackProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "azurestack")
	data, err := readOVFMedia(ctx, p.env, p.status)
	if errors.Is(err, ErrNoConfig) {
		log.Info("no custom data on the provisioning media: booting with an empty config")
	}
	if err != nil {
		return nil, fmt.Errorf("azurestack: %w", err)
	}
	log.Info("read custom data from the provisioning media", "bytes", len(data))
	return data, nil
}
