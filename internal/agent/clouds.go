package agent

// The platforms whose metadata service speaks its own dialect: GCP,
// DigitalOcean, Hetzner, Vultr and UpCloud.

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
// (lines "user:key"; the user part is dropped, as the peer does, and the
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
	return m, a.readFields(ctx, &m, base, h, []field{
		{"GCP_HOSTNAME", "instance/hostname"},
		{"GCP_IP_EXTERNAL_0", "instance/network-interfaces/0/access-configs/0/external-ip"},
		{"GCP_IP_LOCAL_0", "instance/network-interfaces/0/ip"},
		{"GCP_MACHINE_TYPE", "instance/machine-type"},
		{"GCP_ZONE", "instance/zone"},
	})
}

func digitalOceanMetadata(ctx context.Context, a *Agent) (metadata, error) {
	type address struct {
		IPAddress string `json:"ip_address"`
	}
	type iface struct {
		IPv4       address `json:"ipv4"`
		IPv6       address `json:"ipv6"`
		AnchorIPv4 address `json:"anchor_ipv4"`
	}
	var doc struct {
		Hostname   string   `json:"hostname"`
		Region     string   `json:"region"`
		PublicKeys []string `json:"public_keys"`
		Interfaces struct {
			Public  []iface `json:"public"`
			Private []iface `json:"private"`
		} `json:"interfaces"`
	}
	err := a.getJSON(ctx, resource.Request{URL: a.endpoint("digitalocean", "http://169.254.169.254") + "/metadata/v1.json"}, &doc)
	if err != nil {
		return metadata{}, err
	}
	m := metadata{hostname: doc.Hostname, keys: doc.PublicKeys}
	m.add("DIGITALOCEAN_HOSTNAME", doc.Hostname)
	for i, f := range doc.Interfaces.Public {
		n := strconv.Itoa(i)
		m.add("DIGITALOCEAN_IPV4_ANCHOR_"+n, f.AnchorIPv4.IPAddress)
		m.add("DIGITALOCEAN_IPV4_PUBLIC_"+n, f.IPv4.IPAddress)
		m.add("DIGITALOCEAN_IPV6_PUBLIC_"+n, f.IPv6.IPAddress)
	}
	for i, f := range doc.Interfaces.Private {
		n := strconv.Itoa(i)
		m.add("DIGITALOCEAN_IPV4_PRIVATE_"+n, f.IPv4.IPAddress)
		m.add("DIGITALOCEAN_IPV6_PRIVATE_"+n, f.IPv6.IPAddress)
	}
	m.add("DIGITALOCEAN_REGION", doc.Region)
	return m, nil
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
	return m, a.readFields(ctx, &m, base, nil, []field{
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
	return m, a.readFields(ctx, &m, base, nil, []field{
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
