package platform

// IBM Cloud (VPC) attaches a NoCloud-style config drive labelled cidata
// with the user-data in /user-data.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ibmcloudDriveWait is how long Ignition waits for the cidata drive
// before it boots without a config.
const ibmcloudDriveWait = 30 * time.Second

type ibmcloudProvider struct{ env Env }

// newIBMCloud reads /user-data from the cidata drive. No drive within 30
// seconds, or a drive without user-data, is an empty config.
func newIBMCloud(env Env) Provider { return ibmcloudProvider{env: env} }

func (p ibmcloudProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "ibmcloud")
	data, err := readDriveFile(ctx, p.env, []string{"cidata"}, "/user-data", p.env.wait(ibmcloudDriveWait))
	switch {
	case errors.Is(err, errNoDrive):
		log.Info("cidata drive did not appear in time: booting with an empty config", "error", err)
		return nil, fmt.Errorf("ibmcloud: %w: %w", err, ErrNoConfig)
	case errors.Is(err, ErrNoConfig):
		log.Info("no user-data on the cidata drive: booting with an empty config", "reason", err)
		return nil, fmt.Errorf("ibmcloud: %w", err)
	case err != nil:
		return nil, fmt.Errorf("ibmcloud: %w", err)
	}
	log.Info("read user-data from the cidata drive", "bytes", len(data))
	return data, nil
}
