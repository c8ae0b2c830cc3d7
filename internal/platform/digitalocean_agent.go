package platform

import (
	"context"

	"github.com/flintboot/flint/internal/resource"
)

func digitalOceanMetadata(ctx context.Context, host *Host) (Metadata, error) {
	return host.jsonMetadata(ctx, resource.Request{URL: host.endpoint("http://169.254.169.254") + "/metadata/v1.json"}, jsonSpec{
		Hostname: "hostname",
		Keys:     []string{"public_keys.*"},
		Attrs: []field{
			{"DIGITALOCEAN_HOSTNAME", "hostname"},
			{"DIGITALOCEAN_IPV4_ANCHOR_*", "interfaces.public.*.anchor_ipv4.ip_address"},
			{"DIGITALOCEAN_IPV4_PUBLIC_*", "interfaces.public.*.ipv4.ip_address"},
			{"DIGITALOCEAN_IPV6_PUBLIC_*", "interfaces.public.*.ipv6.ip_address"},
			{"DIGITALOCEAN_IPV4_PRIVATE_*", "interfaces.private.*.ipv4.ip_address"},
			{"DIGITALOCEAN_IPV6_PRIVATE_*", "interfaces.private.*.ipv6.ip_address"},
			{"DIGITALOCEAN_REGION", "region"},
		},
	})
}
