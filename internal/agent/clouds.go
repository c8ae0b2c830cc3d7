package agent

// The platforms whose metadata service speaks its own dialect: GCP,
// DigitalOcean, Hetzner, Vultr, UpCloud, Akamai and Oracle Cloud.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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
	var inst struct {
		ID       json.Number `json:"id"`
		HostUUID string      `json:"host_uuid"`
		Label    string      `json:"label"`
		Region   string      `json:"region"`
		Type     string      `json:"type"`
	}
	var network struct {
		IPv4 struct {
			Public  []string `json:"public"`
			Private []string `json:"private"`
		} `json:"ipv4"`
		IPv6 struct {
			SLAAC     string `json:"slaac"`
			LinkLocal string `json:"link_local"`
		} `json:"ipv6"`
	}
	var keys struct {
		Users map[string][]string `json:"users"`
	}
	for path, v := range map[string]any{"/instance": &inst, "/network": &network, "/ssh-keys": &keys} {
		if err := a.getJSON(ctx, resource.Request{URL: base + path, Header: h}, v); err != nil {
			return metadata{}, err
		}
	}
	m := metadata{hostname: inst.Label}
	users := make([]string, 0, len(keys.Users))
	for u := range keys.Users {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, u := range users {
		m.keys = append(m.keys, keys.Users[u]...)
	}
	m.add("AKAMAI_INSTANCE_ID", inst.ID.String())
	m.add("AKAMAI_INSTANCE_HOST_UUID", inst.HostUUID)
	m.add("AKAMAI_INSTANCE_LABEL", inst.Label)
	m.add("AKAMAI_INSTANCE_REGION", inst.Region)
	m.add("AKAMAI_INSTANCE_TYPE", inst.Type)
	for i, ip := range network.IPv4.Public {
		m.add("AKAMAI_IPV4_PUBLIC_"+strconv.Itoa(i), hostAddress(ip))
	}
	for i, ip := range network.IPv4.Private {
		m.add("AKAMAI_IPV4_PRIVATE_"+strconv.Itoa(i), hostAddress(ip))
	}
	m.add("AKAMAI_IPV6_SLAAC", hostAddress(network.IPv6.SLAAC))
	m.add("AKAMAI_IPV6_LINK_LOCAL", hostAddress(network.IPv6.LinkLocal))
	return m, nil
}

// hostAddress drops the prefix length of a single address ("1.2.3.4/32").
func hostAddress(cidr string) string {
	addr, _, _ := strings.Cut(cidr, "/")
	return addr
}

// oracleCloudMetadata reads IMDS v2, which answers only requests with
// "Authorization: Bearer Oracle"; the keys are the instance metadata's
// ssh_authorized_keys, one a line.
func oracleCloudMetadata(ctx context.Context, a *Agent) (metadata, error) {
	base := a.endpoint("oraclecloud", "http://169.254.169.254") + "/opc/v2"
	h := http.Header{"Authorization": {"Bearer Oracle"}}
	retry := []int{http.StatusTooManyRequests}
	var inst struct {
		ID                 string `json:"id"`
		Hostname           string `json:"hostname"`
		Shape              string `json:"shape"`
		CanonicalRegion    string `json:"canonicalRegionName"`
		AvailabilityDomain string `json:"availabilityDomain"`
		FaultDomain        string `json:"faultDomain"`
		Metadata           struct {
			SSHAuthorizedKeys string `json:"ssh_authorized_keys"`
		} `json:"metadata"`
	}
	if err := a.getJSON(ctx, resource.Request{URL: base + "/instance/", Header: h, RetryStatus: retry}, &inst); err != nil {
		return metadata{}, err
	}
	var vnics []struct {
		PrivateIP string `json:"privateIp"`
	}
	if err := a.getJSON(ctx, resource.Request{URL: base + "/vnics/", Header: h, RetryStatus: retry}, &vnics); err != nil {
		return metadata{}, err
	}
	m := metadata{hostname: inst.Hostname, keys: strings.Split(inst.Metadata.SSHAuthorizedKeys, "\n")}
	m.add("ORACLECLOUD_HOSTNAME", inst.Hostname)
	m.add("ORACLECLOUD_INSTANCE_ID", inst.ID)
	m.add("ORACLECLOUD_INSTANCE_SHAPE", inst.Shape)
	m.add("ORACLECLOUD_REGION", inst.CanonicalRegion)
	m.add("ORACLECLOUD_AVAILABILITY_DOMAIN", inst.AvailabilityDomain)
	m.add("ORACLECLOUD_FAULT_DOMAIN", inst.FaultDomain)
	for i, v := range vnics {
		m.add("ORACLECLOUD_IPV4_PRIVATE_"+strconv.Itoa(i), v.PrivateIP)
	}
	return m, nil
}
