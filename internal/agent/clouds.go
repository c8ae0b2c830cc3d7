package agent

// The platforms whose metadata service speaks its own dialect: GCP,
// DigitalOcean, Hetzner, Vultr, UpCloud, Akamai and Oracle Cloud.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/resource"
)

// gcpMetadata reads the SSH keys from the instance's and the project's
// attributes (lines "user:key"; the user part is dropped, as Afterburn does,
// and the keys go to the user the unit names), in Afterburn's order
// (coreos/afterburn src/providers/gcp/mod.rs, fetch_all_ssh_keys): the
// instance's legacy sshKeys, when it has any, are the only keys; else the
// instance's ssh-keys and, unless the instance sets block-project-ssh-keys,
// the project's sshKeys and ssh-keys.
func gcpMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("gcp", "http://169.254.169.254") + "/computeMetadata/v1"
	h := http.Header{"Metadata-Flavor": {"Google"}}
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/instance/hostname", h); err != nil {
		return m, err
	}
	keys := func(p string) ([]string, error) {
		v, err := a.getText(ctx, base+"/"+p, h)
		var out []string
		for _, line := range strings.Split(v, "\n") {
			if _, key, ok := strings.Cut(line, ":"); ok {
				out = append(out, strings.TrimSpace(key))
			}
		}
		return out, err
	}
	if m.keys, err = keys("instance/attributes/sshKeys"); err != nil {
		return m, err
	}
	if len(m.keys) == 0 {
		if m.keys, err = keys("instance/attributes/ssh-keys"); err != nil {
			return m, err
		}
		block, err := a.getText(ctx, base+"/instance/attributes/block-project-ssh-keys", h)
		if err != nil {
			return m, err
		}
		// Afterburn takes only "true"; GCP's guest agent, any case of it.
		if strings.ToLower(block) != "true" {
			for _, p := range []string{"project/attributes/sshKeys", "project/attributes/ssh-keys"} {
				more, err := keys(p)
				if err != nil {
					return m, err
				}
				m.keys = append(m.keys, more...)
			}
		}
	}
	return m, a.readFields(ctx, &m, base, h, "instance/hostname", []field{
		{"GCP_HOSTNAME", "instance/hostname"},
		{"GCP_IP_EXTERNAL_0", "instance/network-interfaces/0/access-configs/0/external-ip"},
		{"GCP_IP_LOCAL_0", "instance/network-interfaces/0/ip"},
		{"GCP_MACHINE_TYPE", "instance/machine-type"},
		{"GCP_ZONE", "instance/zone"},
	})
}

func digitalOceanMetadata(ctx context.Context, a *Agent) (metadata, error) {
	return a.jsonMetadata(ctx, resource.Request{URL: a.endpoint("digitalocean", "http://169.254.169.254") + "/metadata/v1.json"}, jsonSpec{
		hostname: "hostname",
		keys:     []string{"public_keys.*"},
		attrs: []field{
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

// hetznerMetadata reads the hostname and the keys, one path each;
// public-keys is a JSON list (coreos/afterburn src/providers/hetzner/mod.rs).
func hetznerMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("hetzner", "http://169.254.169.254") + "/hetzner/v1/metadata"
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/hostname", nil); err != nil {
		return m, err
	}
	keys, err := a.getText(ctx, base+"/public-keys", nil)
	if err != nil {
		return m, err
	}
	if keys != "" {
		if err := json.Unmarshal([]byte(keys), &m.keys); err != nil {
			return m, fmt.Errorf("hetzner: %s/public-keys: %w: %w", base, ErrProtocol, err)
		}
	}
	return m, nil
}

// hetznerAttributes reads the attributes as Afterburn does
// (coreos/afterburn src/providers/hetzner/mod.rs, From<Attributes>): the
// whole metadata document (YAML) for the plain values and, from its
// network-config (cloud-init's version 1), the address of the first
// IPv6 subnet of the first physical interface as HETZNER_PUBLIC_IPV6;
// the private networks' addresses from private-networks (a YAML list).
func hetznerAttributes(ctx context.Context, a *Agent) ([]attribute, error) {
	base := a.endpoint("hetzner", "http://169.254.169.254") + "/hetzner/v1/metadata"
	data, err := a.get(ctx, resource.Request{URL: base})
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) ([]attribute, error) {
		return nil, fmt.Errorf("hetzner: %s: %w: %w", what, ErrProtocol, err)
	}
	doc, err := readYAMLKeys(data, "availability-zone", "hostname", "instance-id", "public-ipv4", "region")
	if err != nil {
		return fail(base, err)
	}
	var m metadata
	for _, f := range []field{
		{"HETZNER_AVAILABILITY_ZONE", "availability-zone"},
		{"HETZNER_HOSTNAME", "hostname"},
		{"HETZNER_INSTANCE_ID", "instance-id"},
		{"HETZNER_PUBLIC_IPV4", "public-ipv4"},
	} {
		v, err := yamlString(doc, f.path)
		if err != nil {
			return fail(base, err)
		}
		m.add(f.attr, v)
	}
	if block := yamlBlock(data, "network-config"); block != nil {
		tree, err := readYAMLTree(block)
		if err != nil {
			return fail(base+" network-config", err)
		}
		m.add("HETZNER_PUBLIC_IPV6", hetznerPublicIPv6(tree))
	}
	region, err := yamlString(doc, "region")
	if err != nil {
		return fail(base, err)
	}
	m.add("HETZNER_REGION", region)

	data, err = a.get(ctx, resource.Request{URL: base + "/private-networks"})
	if err != nil {
		return nil, err
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return fail(base+"/private-networks", err)
	}
	for i, ip := range jsonGet(tree, "*.ip") {
		m.add("HETZNER_PRIVATE_IPV4_"+strconv.Itoa(i), ip)
	}
	return m.attrs, nil
}

// hetznerPublicIPv6 returns the address, without its prefix length, of
// the first subnet marked ipv6 of the first physical entry, "" when there
// is none or it is not an IPv6 address.
func hetznerPublicIPv6(tree any) string {
	entries, _ := jsonPath(tree, "config").([]any)
	for _, e := range entries {
		if netString(jsonPath(e, "type")) != "physical" {
			continue
		}
		subnets, _ := jsonPath(e, "subnets").([]any)
		for _, sub := range subnets {
			if netString(jsonPath(sub, "ipv6")) != "true" {
				continue
			}
			p, err := netip.ParsePrefix(netString(jsonPath(sub, "address")))
			if err != nil || !p.Addr().Is6() {
				return ""
			}
			return p.Addr().String()
		}
		return ""
	}
	return ""
}

// jsonPath returns the value under key of the object v, nil when v is not
// an object or has no such key.
func jsonPath(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

// yamlBlock returns the lines indented below the top-level "key:" of a YAML
// document (its nested value), nil when the key is absent or has no block.
func yamlBlock(data []byte, key string) []byte {
	var out []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case !in && strings.TrimRight(line, " \r") == key+":":
			in = true
		case in && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, " ")):
			out = append(out, line)
		case in:
			return []byte(strings.Join(out, "\n"))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return []byte(strings.Join(out, "\n"))
}

// vultrMetadata reads one value per path; public-keys is one key a line.
func vultrMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("vultr", "http://169.254.169.254") + "/v1"
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/hostname", nil); err != nil {
		return m, err
	}
	keys, err := a.getText(ctx, base+"/public-keys", nil)
	if err != nil {
		return m, err
	}
	m.keys = keyLines(keys)
	return m, a.readFields(ctx, &m, base, nil, "hostname", []field{
		{"VULTR_HOSTNAME", "hostname"},
		{"VULTR_INSTANCE_ID", "instanceid"},
		{"VULTR_INSTANCE_V2_ID", "instance-v2-id"},
		{"VULTR_REGION_CODE", "region/regioncode"},
	})
}

// upCloudMetadata reads what Afterburn reads, one path each
// (coreos/afterburn src/providers/upcloud/mod.rs): hostname, public_keys
// (one a line), instance_id and region; and, as flint's own attributes, the
// addresses of the JSON document /metadata/v1.json when the service has it.
func upCloudMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("upcloud", "http://169.254.169.254") + "/metadata/v1"
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/hostname", nil); err != nil {
		return m, err
	}
	keys, err := a.getText(ctx, base+"/public_keys", nil)
	if err != nil {
		return m, err
	}
	m.keys = keyLines(keys)
	if err := a.readFields(ctx, &m, base, nil, "hostname", []field{
		{"UPCLOUD_HOSTNAME", "hostname"},
		{"UPCLOUD_INSTANCE_ID", "instance_id"},
		{"UPCLOUD_REGION", "region"},
	}); err != nil {
		return m, err
	}
	doc, err := a.getJSONDoc(ctx, resource.Request{URL: base + ".json"})
	if errors.Is(err, resource.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	count := map[string]int{}
	ifaces, _ := jsonPath(jsonPath(doc, "network"), "interfaces").([]any)
	for _, f := range ifaces {
		addrs, _ := jsonPath(f, "ip_addresses").([]any)
		for _, ad := range addrs {
			kind := strings.ToUpper(netString(jsonPath(ad, "family")) + "_" + netString(jsonPath(f, "type")))
			m.add("UPCLOUD_"+kind+"_"+strconv.Itoa(count[kind]), netString(jsonPath(ad, "address")))
			count[kind]++
		}
	}
	return m, nil
}

// keyLines splits a list of keys, one a line, dropping blanks around
// each.
func keyLines(s string) []string {
	var keys []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			keys = append(keys, line)
		}
	}
	return keys
}

// akamaiMetadata asks the Metadata service for a token (PUT /v1/token),
// then for the instance, its network and its SSH keys as JSON, with the
// token. The keys are listed per user; like GCP's, all of them go to the
// user the unit names.
func akamaiMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("akamai", "http://169.254.169.254") + "/v1"
	token, err := a.get(ctx, resource.Request{
		URL:    base + "/token",
		Method: http.MethodPut,
		Header: http.Header{"Accept": {"text/plain"}, "Metadata-Token-Expiry-Seconds": {"300"}},
	})
	if err != nil {
		return metadata{}, err
	}
	h := http.Header{"Accept": {"application/json"}, "Metadata-Token": {strings.TrimSpace(string(token))}}
	docs := map[string]any{}
	for _, name := range []string{"instance", "network", "ssh-keys"} {
		docs[name], err = a.getJSONDoc(ctx, resource.Request{URL: base + "/" + name, Header: h})
		// A service without ssh-keys (404) has no keys: the attributes
		// need only the other two, as Afterburn's.
		if name == "ssh-keys" && errors.Is(err, resource.ErrNotFound) {
			err = nil
		}
		if err != nil {
			return metadata{}, err
		}
	}
	m := jsonSpec{
		hostname: "instance.label",
		keys:     []string{"ssh-keys.users.*.*"},
		// Afterburn's names and values (coreos/afterburn
		// src/providers/akamai/mod.rs parse_attrs): addresses as the
		// service gives them, with their prefix length (1.2.3.4/32).
		attrs: []field{
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
	// The tags, joined by ":" as Afterburn does.
	m.add("AKAMAI_INSTANCE_TAGS", strings.Join(jsonGet(docs["instance"], "tags.*"), ":"))
	return m, nil
}

// oracleCloudMetadata reads IMDS v2, which answers only requests with
// "Authorization: Bearer Oracle"; the keys are the instance metadata's
// ssh_authorized_keys, one a line.
func oracleCloudMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("oraclecloud", "http://169.254.169.254") + "/opc/v2"
	h := http.Header{"Authorization": {"Bearer Oracle"}}
	retry := []int{http.StatusTooManyRequests}
	// The instance document at Afterburn's path (coreos/afterburn
	// src/providers/oraclecloud/mod.rs), without a trailing slash.
	instance, err := a.getJSONDoc(ctx, resource.Request{URL: base + "/instance", Header: h, RetryStatus: retry})
	if err != nil {
		return metadata{}, err
	}
	docs := map[string]any{"instance": instance}
	// The VNICs give ORACLECLOUD_IPV4_PRIVATE_n, flint's own: a service
	// without them (404) leaves them out.
	vnics, err := a.getJSONDoc(ctx, resource.Request{URL: base + "/vnics/", Header: h, RetryStatus: retry})
	switch {
	case errors.Is(err, resource.ErrNotFound):
	case err != nil:
		return metadata{}, err
	default:
		docs["vnics"] = vnics
	}
	return jsonSpec{
		hostname: "instance.hostname",
		keys:     []string{"instance.metadata.ssh_authorized_keys"},
		attrs: []field{
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
