package platform

import (
	"context"
	"errors"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

// awsMetadata uses IMDSv2: a session token from PUT /latest/api/token goes
// with every request. Instances that still allow IMDSv1 work without one,
// so a failed token request is logged and the requests go without.
func awsMetadata(ctx context.Context, host *Host) (Metadata, error) {
	root := host.endpoint(resource.LinkLocalMetadata)
	h := http.Header{}
	token, err := awsToken(ctx, host.Env, host.ID, root)
	if err != nil {
		host.Logger.Warn("no IMDSv2 session token: trying IMDSv1", "error", err)
	} else {
		h.Set("X-Aws-Ec2-Metadata-Token", token)
	}
	m, err := host.ec2Metadata(ctx, root+"/2021-01-03/meta-data", h, "hostname", []field{
		{"AWS_HOSTNAME", "hostname"},
		{"AWS_PUBLIC_HOSTNAME", "public-hostname"},
		{"AWS_IPV4_LOCAL", "local-ipv4"},
		{"AWS_IPV4_PUBLIC", "public-ipv4"},
		{"AWS_IPV6", "ipv6"},
		{"AWS_AVAILABILITY_ZONE", "placement/availability-zone"},
		{"AWS_AVAILABILITY_ZONE_ID", "placement/availability-zone-id"},
		{"AWS_INSTANCE_ID", "instance-id"},
		{"AWS_INSTANCE_TYPE", "instance-type"},
	})
	if err != nil {
		return m, err
	}
	// The region from the instance identity document, as Afterburn
	// takes it (coreos/afterburn src/providers/aws/mod.rs); absent: none.
	doc, err := host.getJSONDoc(ctx, resource.Request{URL: root + "/2021-01-03/dynamic/instance-identity/document", Header: h})
	if errors.Is(err, resource.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if v := jsonGet(doc, "region"); len(v) > 0 {
		m.add("AWS_REGION", v[0])
	}
	return m, nil
}
