package agent

// Scaleway serves the instance document at /conf?format=json and takes the
// instance's state at /state; {"state_detail":"booted"} is what its own
// scw-signal-state sends once the instance is up (peers.md §1.3). The
// service answers only connections from a privileged source port (the
// config provider explains why), so every request binds one.

import (
	"context"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

func (a *Agent) scalewayURL(path string) string {
	return a.endpoint("scaleway", "http://169.254.42.42") + path
}

func scalewayMetadata(ctx context.Context, a *Agent) (metadata, error) {
	var doc struct {
		ID             string `json:"id"`
		Hostname       string `json:"hostname"`
		CommercialType string `json:"commercial_type"`
		PrivateIP      string `json:"private_ip"`
		PublicIP       struct {
			Address string `json:"address"`
		} `json:"public_ip"`
		IPv6 struct {
			Address string `json:"address"`
		} `json:"ipv6"`
		Location struct {
			ZoneID string `json:"zone_id"`
		} `json:"location"`
		SSHPublicKeys []struct {
			Key string `json:"key"`
		} `json:"ssh_public_keys"`
	}
	err := a.getJSON(ctx, resource.Request{URL: a.scalewayURL("/conf?format=json"), LocalPort: a.localPort()}, &doc)
	if err != nil {
		return metadata{}, err
	}
	m := metadata{hostname: doc.Hostname}
	for _, k := range doc.SSHPublicKeys {
		m.keys = append(m.keys, k.Key)
	}
	m.add("SCALEWAY_HOSTNAME", doc.Hostname)
	m.add("SCALEWAY_INSTANCE_ID", doc.ID)
	m.add("SCALEWAY_INSTANCE_TYPE", doc.CommercialType)
	m.add("SCALEWAY_IPV4_PRIVATE", doc.PrivateIP)
	m.add("SCALEWAY_IPV4_PUBLIC", doc.PublicIP.Address)
	m.add("SCALEWAY_IPV6_PUBLIC", doc.IPv6.Address)
	m.add("SCALEWAY_ZONE_ID", doc.Location.ZoneID)
	return m, nil
}

func scalewayCheckIn(ctx context.Context, a *Agent) error {
	_, err := a.get(ctx, resource.Request{
		URL:       a.scalewayURL("/state"),
		Method:    http.MethodPost,
		Header:    http.Header{"Content-Type": {"application/json"}},
		Body:      []byte(`{"state_detail":"booted"}`),
		LocalPort: a.localPort(),
	})
	return err
}
