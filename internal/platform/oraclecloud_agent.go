package platform

import (
	"context"
	"errors"

	"github.com/flintboot/flint/internal/resource"
)

// oracleCloudMetadata reads IMDS v2, which answers only requests with
// "Authorization: Bearer Oracle"; the keys are the instance metadata's
// ssh_authorized_keys, one a line.
func oracleCloudMetadata(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint(oracleIMDS) + "/opc/v2"
	// The instance document at Afterburn's path (coreos/afterburn
	// src/providers/oraclecloud/mod.rs), without a trailing slash.
	instance, err := host.getJSONDoc(ctx, oracleIMDSRequest(base+"/instance"))
	if err != nil {
		return Metadata{}, err
	}
	docs := map[string]any{"instance": instance}
	// The VNICs give FLINT_ORACLECLOUD_IPV4_PRIVATE_n, flint's own: a service
	// without them (404) leaves them out.
	vnics, err := host.getJSONDoc(ctx, oracleIMDSRequest(base+"/vnics/"))
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
			{"FLINT_ORACLECLOUD_IPV4_PRIVATE_*", "vnics.*.privateIp"},
		},
	}.read(docs), nil
}
