package platform

import (
	"context"
)

// exoscaleMetadata reads Exoscale's CloudStack-style service.
func exoscaleMetadata(ctx context.Context, host *Host) (Metadata, error) {
	return host.cloudStackStyle(ctx, host.endpoint("http://169.254.169.254")+"/1.0/meta-data", "EXOSCALE_", "PUBLIC_IPV4", "LOCAL_IPV4")
}
