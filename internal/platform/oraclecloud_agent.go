package platform

import (
	"context"
	"errors"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

// oracleCloudMetadata reads IMDS v2, which answers only requests with
// "Authorization: Bearer Oracle"; the keys are the instance metadata's
// ssh_authorized_keys, one a line.
func oracleCloudMetadata(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint("oraclecloud", "http://169.254.169.254") + "/opc/v2"
	h := http.Header{"Authorization": {"Bearer Oracle"}}
	retry := []int{http.StatusTooManyRequests}
	// The instance document at Afterburn's path (coreos/afterburn
	// src/providers/oraclecloud/mod.rs), without a trailing slash.
	instance, err := host.getJSONDoc(ctx, resource.Request{URL: base + "/instance", Header: h, RetryStatus: retry})
	if err != nil {
		return Metadata{}, err
	}
	docs := map[string]any{"instance": instance}
	// The VNICs give ORACLECLOUD_IPV4_PRIVATE_n, flint's own: a service
	// without them (404) leaves them out.
	vnics, err := host.getJSONDoc(ctx, resource.Request{URL: base + "/vnics/", Header: h, RetryStatus: retry})
	switch {
	case errors.Is(err, resource.ErrNotFound):
	case err != nil:
		return Metadata{}, err
	default:
		docs["vnics"] = vnics
	}
	return jsonSpec{
		Hostname: "instance.hostname",
		Keys:     []string{"instance.metadata.ssh_authorized_keys"},
		Attrs: []field{
			{"ORACLECLOUD_AVAILABILITY_DOMAIN", "instance.availabilityDomain"},
			{"ORACLECLOUD_COMPARTMENT_ID", "instance.compartmentId"},
			{"ORACLECLOUD_FAULT_DOMAIN", "instance.faultDomain"},
			{"ORACLECLOUD_HOSTNAME", "instance.hostname"},
			{"ORACLECLOUD_INSTANCE_ID", "instance.id"},
			{"ORACLECLOUD_INSTANCE_SHAPE", "instance.shape"},
			{"ORACLECLOUD_REGION_ID", "instance.canonicalRegionName"},
			{"ORACLECLOUD_IPV4_PRIVATE_*", "vnics.*.privateIp"},
		},
	}.read(docs), nil
}
