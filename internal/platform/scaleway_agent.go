package platform

// Scaleway serves the instance document at /conf?format=json and takes the
// instance's state as an HTTP PATCH of /state; {"state_detail":"booted"} is
// what its own scw-signal-state sends once the instance is up (as
// coreos/afterburn src/providers/scaleway/mod.rs boot_checkin does, a
// provider Scaleway contributed; its mock_tests.rs asserts the PATCH). The service answers only connections
// from a privileged source port (the config provider explains why), so every
// request binds one.

import (
	"context"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

func (host *Host) scalewayURL(path string) string {
	return host.endpoint("http://169.254.42.42") + path
}

func scalewayMetadata(ctx context.Context, host *Host) (Metadata, error) {
	var md Metadata
	r := resource.Request{URL: host.scalewayURL("/conf?format=json")}
	_, err := fromPrivilegedPort(host.Env, host.localPort, &r, func() ([]byte, error) {
		var err error
		md, err = host.jsonMetadata(ctx, r, scalewaySpec)
		return nil, err
	})
	return md, err
}

// scalewaySpec maps the instance document to Afterburn's attributes
// (coreos/afterburn src/providers/scaleway/mod.rs).
var scalewaySpec = jsonSpec{
	Hostname: "hostname",
	Keys:     []string{"ssh_public_keys.*.key"},
	Attrs: []field{
		{"SCALEWAY_HOSTNAME", "hostname"},
		{"SCALEWAY_INSTANCE_ID", "id"},
		{"SCALEWAY_INSTANCE_TYPE", "commercial_type"},
		{"SCALEWAY_IPV4_PRIVATE", "private_ip"},
		{"SCALEWAY_IPV4_PUBLIC", "public_ip.address"},
		{"SCALEWAY_IPV6_PUBLIC", "ipv6.address"},
		{"SCALEWAY_ZONE_ID", "location.zone_id"},
	},
}

func scalewayCheckIn(ctx context.Context, host *Host) error {
	r := resource.Request{
		URL:    host.scalewayURL("/state"),
		Method: http.MethodPatch,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   []byte(`{"state_detail":"booted"}`),
	}
	_, err := fromPrivilegedPort(host.Env, host.localPort, &r, func() ([]byte, error) {
		return host.get(ctx, r)
	})
	return err
}
