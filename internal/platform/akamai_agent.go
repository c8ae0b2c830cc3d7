package platform

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/flintboot/flint/internal/resource"
)

// akamaiMetadata asks the Metadata service for a token (PUT /v1/token),
// then for the instance, its network and its SSH keys as JSON, with the
// token. The keys are listed per user; like GCP's, all of them go to the
// user the unit names.
func akamaiMetadata(ctx context.Context, host *Host) (Metadata, error) {
	root := host.endpoint(resource.LinkLocalMetadata)
	token, err := akamaiToken(ctx, host.Env, host.ID, root)
	if err != nil {
		return Metadata{}, err
	}
	base := root + "/v1"
	h := http.Header{"Accept": {"application/json"}, "Metadata-Token": {token}}
	docs := map[string]any{}
	for _, name := range []string{"instance", "network", "ssh-keys"} {
		docs[name], err = host.getJSONDoc(ctx, resource.Request{URL: base + "/" + name, Header: h})
		// A service without ssh-keys (404) has no keys: the attributes
		// need only the other two, as Afterburn's.
		if name == "ssh-keys" && errors.Is(err, resource.ErrNotFound) {
			err = nil
		}
		if err != nil {
			return Metadata{}, err
		}
	}
	m := jsonSpec{
		Hostname: "instance.label",
		Keys:     []string{"ssh-keys.users.*.*"},
		// Afterburn's names and values (coreos/afterburn
		// src/providers/akamai/mod.rs parse_attrs): addresses as the
		// service gives them, with their prefix length (1.2.3.4/32).
		Attrs: []field{
			{"AKAMAI_INSTANCE_ID", "instance.id"},
			{"AKAMAI_INSTANCE_HOST_UUID", "instance.host_uuid"},
			{"AKAMAI_INSTANCE_LABEL", "instance.label"},
			{"AKAMAI_INSTANCE_REGION", "instance.region"},
			{"AKAMAI_INSTANCE_TYPE", "instance.type"},
			{"AKAMAI_PUBLIC_IPV4_*", "network.ipv4.public.*"},
			{"AKAMAI_PRIVATE_IPV4_*", "network.ipv4.private.*"},
			{"AKAMAI_SHARED_IPV4_*", "network.ipv4.shared.*"},
			{"AKAMAI_IPV6_SLAAC", "network.ipv6.slaac"},
			{"AKAMAI_IPV6_LINK_LOCAL", "network.ipv6.link_local"},
			{"AKAMAI_IPV6_RANGE_*", "network.ipv6.ranges.*"},
			{"AKAMAI_IPV6_SHARED_RANGE_*", "network.ipv6.shared_ranges.*"},
		},
	}.read(docs)
	// Afterburn writes the SLAAC and link-local addresses whatever they
	// are (plain strings of its Ipv6 struct): an empty one is an empty
	// attribute, which the spec above leaves out.
	for _, f := range []field{{"AKAMAI_IPV6_SLAAC", "slaac"}, {"AKAMAI_IPV6_LINK_LOCAL", "link_local"}} {
		if v, ok := jsonPath(jsonPath(docs["network"], "ipv6"), f.path).(string); ok && v == "" {
			m.Attrs = append(m.Attrs, Attribute{f.attr, ""})
		}
	}
	// The tags, joined by ":" as Afterburn does, and written as Afterburn
	// does when there are none: AKAMAI_INSTANCE_TAGS= (the attribute is
	// always in its set, even empty).
	m.Attrs = append(m.Attrs, Attribute{"AKAMAI_INSTANCE_TAGS", strings.Join(jsonGet(docs["instance"], "tags.*"), ":")})
	return m, nil
}
