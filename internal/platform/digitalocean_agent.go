package platform

import (
	"context"
	"strconv"

	"github.com/flintboot/flint/internal/resource"
)

// digitalOceanMetadata reads /metadata/v1.json. The addresses are
// Afterburn's (coreos/afterburn src/providers/digitalocean/mod.rs
// parse_attrs): it decodes them as IpAddr and prints them back, so they are
// written in canonical form (RFC 5952: the service's
// 2604:A880:0800:0000:1000:0000:0000:0000 is 2604:a880:800:0:1000::), and
// numbered by the interface's index in its list, not by how many addresses
// came before.
func digitalOceanMetadata(ctx context.Context, host *Host) (Metadata, error) {
	doc, err := host.getJSONDoc(ctx, resource.Request{URL: host.endpoint("http://169.254.169.254") + "/metadata/v1.json"})
	if err != nil {
		return Metadata{}, err
	}
	m := jsonSpec{
		Hostname: "hostname",
		Keys:     []string{"public_keys.*"},
		Attrs:    []field{{"DIGITALOCEAN_HOSTNAME", "hostname"}},
	}.read(doc)
	for _, a := range []struct{ name, list, key string }{
		{"DIGITALOCEAN_IPV4_ANCHOR_", "public", "anchor_ipv4"},
		{"DIGITALOCEAN_IPV4_PUBLIC_", "public", "ipv4"},
		{"DIGITALOCEAN_IPV6_PUBLIC_", "public", "ipv6"},
		{"DIGITALOCEAN_IPV4_PRIVATE_", "private", "ipv4"},
		{"DIGITALOCEAN_IPV6_PRIVATE_", "private", "ipv6"},
	} {
		ifaces, _ := jsonPath(jsonPath(doc, "interfaces"), a.list).([]any)
		for i, iface := range ifaces {
			if v := jsonGet(iface, a.key+".ip_address"); len(v) > 0 {
				m.add(a.name+strconv.Itoa(i), canonicalIP(v[0]))
			}
		}
	}
	if v := jsonGet(doc, "region"); len(v) > 0 {
		m.add("DIGITALOCEAN_REGION", v[0])
	}
	return m, nil
}
