package agent

// The platforms whose metadata service speaks its own dialect: GCP,
// DigitalOcean, Hetzner, Vultr, UpCloud, Akamai and Oracle Cloud.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/resource"
)

// gcpMetadata reads the instance's and the project's ssh-keys attributes
// (lines "user:key"; the user part is dropped, as Afterburn does, and the
// keys go to the user the unit names), the project's unless the instance
// sets block-project-ssh-keys.
func gcpMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("gcp", "http://169.254.169.254") + "/computeMetadata/v1"
	h := http.Header{"Metadata-Flavor": {"Google"}}
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/instance/hostname", h); err != nil {
		return m, err
	}
	paths := []string{"instance/attributes/ssh-keys", "instance/attributes/sshKeys"}
	block, err := a.getText(ctx, base+"/instance/attributes/block-project-ssh-keys", h)
	if err != nil {
		return m, err
	}
	if strings.ToLower(block) != "true" {
		paths = append(paths, "project/attributes/ssh-keys", "project/attributes/sshKeys")
	}
	for _, p := range paths {
		v, err := a.getText(ctx, base+"/"+p, h)
		if err != nil {
			return m, err
		}
		for _, line := range strings.Split(v, "\n") {
			if _, key, ok := strings.Cut(line, ":"); ok {
				m.keys = append(m.keys, strings.TrimSpace(key))
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

// hetznerMetadata reads one value per path; public-keys is a JSON list.
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
	return m, a.readFields(ctx, &m, base, nil, "hostname", []field{
		{"HETZNER_AVAILABILITY_ZONE", "availability-zone"},
		{"HETZNER_HOSTNAME", "hostname"},
		{"HETZNER_INSTANCE_ID", "instance-id"},
		{"HETZNER_PUBLIC_IPV4", "public-ipv4"},
		{"HETZNER_REGION", "region"},
	})
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
	m.keys = strings.Split(keys, "\n")
	return m, a.readFields(ctx, &m, base, nil, "hostname", []field{
		{"VULTR_HOSTNAME", "hostname"},
		{"VULTR_INSTANCE_ID", "instanceid"},
		{"VULTR_INSTANCE_V2_ID", "instance-v2-id"},
		{"VULTR_REGION_CODE", "region/regioncode"},
	})
}

func upCloudMetadata(ctx context.Context, a *Agent) (metadata, error) {
	var doc struct {
		Hostname   string   `json:"hostname"`
		InstanceID string   `json:"instance_id"`
		Region     string   `json:"region"`
		PublicKeys []string `json:"public_keys"`
		Network    struct {
			Interfaces []struct {
				Type        string `json:"type"`
				IPAddresses []struct {
					Address string `json:"address"`
					Family  string `json:"family"`
				} `json:"ip_addresses"`
			} `json:"interfaces"`
		} `json:"network"`
	}
	err := a.getJSON(ctx, resource.Request{URL: a.endpoint("upcloud", "http://169.254.169.254") + "/metadata/v1.json"}, &doc)
	if err != nil {
		return metadata{}, err
	}
	m := metadata{hostname: doc.Hostname, keys: doc.PublicKeys}
	m.add("UPCLOUD_HOSTNAME", doc.Hostname)
	m.add("UPCLOUD_INSTANCE_ID", doc.InstanceID)
	m.add("UPCLOUD_REGION", doc.Region)
	count := map[string]int{}
	for _, f := range doc.Network.Interfaces {
		for _, ad := range f.IPAddresses {
			kind := strings.ToUpper(ad.Family + "_" + f.Type)
			m.add("UPCLOUD_"+kind+"_"+strconv.Itoa(count[kind]), ad.Address)
			count[kind]++
		}
	}
	return m, nil
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
		if docs[name], err = a.getJSONDoc(ctx, resource.Request{URL: base + "/" + name, Header: h}); err != nil {
			return metadata{}, err
		}
	}
	m := jsonSpec{
		hostname: "instance.label",
		keys:     []string{"ssh-keys.users.*.*"},
		attrs: []field{
			{"AKAMAI_INSTANCE_ID", "instance.id"},
			{"AKAMAI_INSTANCE_HOST_UUID", "instance.host_uuid"},
			{"AKAMAI_INSTANCE_LABEL", "instance.label"},
			{"AKAMAI_INSTANCE_REGION", "instance.region"},
			{"AKAMAI_INSTANCE_TYPE", "instance.type"},
			{"AKAMAI_IPV4_PUBLIC_*", "network.ipv4.public.*"},
			{"AKAMAI_IPV4_PRIVATE_*", "network.ipv4.private.*"},
			{"AKAMAI_IPV6_SLAAC", "network.ipv6.slaac"},
			{"AKAMAI_IPV6_LINK_LOCAL", "network.ipv6.link_local"},
		},
	}.read(docs)
	// The service gives addresses with their prefix length (1.2.3.4/32).
	for i, at := range m.attrs {
		if strings.Contains(at.name, "_IPV") {
			m.attrs[i].value, _, _ = strings.Cut(at.value, "/")
		}
	}
	return m, nil
}

// oracleCloudMetadata reads IMDS v2, which answers only requests with
// "Authorization: Bearer Oracle"; the keys are the instance metadata's
// ssh_authorized_keys, one a line.
func oracleCloudMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("oraclecloud", "http://169.254.169.254") + "/opc/v2"
	docs := map[string]any{}
	for _, name := range []string{"instance", "vnics"} {
		var err error
		r := resource.Request{URL: base + "/" + name + "/", Header: http.Header{"Authorization": {"Bearer Oracle"}}, RetryStatus: []int{http.StatusTooManyRequests}}
		if docs[name], err = a.getJSONDoc(ctx, r); err != nil {
			return metadata{}, err
		}
	}
	return jsonSpec{
		hostname: "instance.hostname",
		keys:     []string{"instance.metadata.ssh_authorized_keys"},
		attrs: []field{
			{"ORACLECLOUD_HOSTNAME", "instance.hostname"},
			{"ORACLECLOUD_INSTANCE_ID", "instance.id"},
			{"ORACLECLOUD_INSTANCE_SHAPE", "instance.shape"},
			{"ORACLECLOUD_REGION", "instance.canonicalRegionName"},
			{"ORACLECLOUD_AVAILABILITY_DOMAIN", "instance.availabilityDomain"},
			{"ORACLECLOUD_FAULT_DOMAIN", "instance.faultDomain"},
			{"ORACLECLOUD_IPV4_PRIVATE_*", "vnics.*.privateIp"},
		},
	}.read(docs), nil
}
