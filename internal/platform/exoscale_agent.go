package platform

import (
	"context"

	"github.com/flintboot/flint/internal/resource"
)

// exoscaleMetadata reads Exoscale's CloudStack-style service.
func exoscaleMetadata(ctx context.Context, host *Host) (Metadata, error) {
	return host.cloudStackStyle(ctx, host.endpoint(resource.LinkLocalMetadata)+"/1.0/meta-data", "EXOSCALE_", "PUBLIC_IPV4", "LOCAL_IPV4")
}
