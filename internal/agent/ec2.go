package agent

// AWS, OpenStack's metadata service and Alibaba Cloud serve the EC2
// metadata layout: one value per path under meta-data/, and the SSH keys
// as public-keys/ listing indexes ("0=name" or "0/") whose
// public-keys/<i>/openssh-key is the key.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/flintboot/flint/internal/platform"

	"github.com/flintboot/flint/internal/resource"
)

// field is one metadata value read into an attribute.
type field struct{ attr, path string }

// readFields adds each field's value under base as an attribute; absent
// values (404) are left out. The value at hostnamePath is m.hostname,
// read already: it is not asked for again.
func (a *Agent) readFields(ctx context.Context, m *metadata, base string, h http.Header, hostnamePath string, fields []field) error {
	for _, f := range fields {
		if f.path == hostnamePath {
			m.add(f.attr, m.hostname)
			continue
		}
		v, err := a.getText(ctx, base+"/"+f.path, h)
		if err != nil {
			return err
		}
		m.add(f.attr, v)
	}
	return nil
}

// ec2Keys reads the keys listed at base/public-keys, or public-keys/ on
// Alibaba Cloud: the paths Afterburn asks (coreos/afterburn
// src/providers/aws/mod.rs, src/providers/openstack/network.rs,
// src/providers/aliyun/mod.rs).
func (a *Agent) ec2Keys(ctx context.Context, base string, h http.Header) ([]string, error) {
	listPath := "/public-keys"
	if a.platform.id == "aliyun" {
		listPath += "/"
	}
	list, err := a.getText(ctx, base+listPath, h)
	if err != nil || list == "" {
		return nil, err
	}
	var keys []string
	for _, line := range strings.Split(list, "\n") {
		i, _, _ := strings.Cut(strings.TrimSpace(line), "=")
		i = strings.TrimSuffix(i, "/")
		if i == "" {
			continue
		}
		k, err := a.getText(ctx, base+"/public-keys/"+i+"/openssh-key", h)
		if err != nil {
			return nil, err
		}
		keys = append(keys, strings.Split(k, "\n")...)
	}
	return keys, nil
}

// ec2Metadata reads hostname, keys and fields from an EC2-style service.
func (a *Agent) ec2Metadata(ctx context.Context, base string, h http.Header, hostnamePath string, fields []field) (metadata, error) {
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/"+hostnamePath, h); err != nil {
		return m, err
	}
	if m.keys, err = a.ec2Keys(ctx, base, h); err != nil {
		return m, err
	}
	return m, a.readFields(ctx, &m, base, h, hostnamePath, fields)
}

// awsMetadata uses IMDSv2: a session token from PUT /latest/api/token goes
// with every request. Instances that still allow IMDSv1 work without one,
// so a failed token request is logged and the requests go without.
func awsMetadata(ctx context.Context, a *Agent) (metadata, error) {
	root := a.endpoint("aws", "http://169.254.169.254")
	h := http.Header{}
	token, err := a.get(ctx, resource.Request{
		URL:    root + "/latest/api/token",
		Method: http.MethodPut,
		Header: http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}},
	})
	if err != nil {
		a.log.Warn("no IMDSv2 session token: trying IMDSv1", "error", err)
	} else {
		h.Set("X-Aws-Ec2-Metadata-Token", strings.TrimSpace(string(token)))
	}
	m, err := a.ec2Metadata(ctx, root+"/2021-01-03/meta-data", h, "hostname", []field{
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
	doc, err := a.getJSONDoc(ctx, resource.Request{URL: root + "/2021-01-03/dynamic/instance-identity/document", Header: h})
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

// openStackService reads OpenStack's metadata service: the EC2-style
// values, and the instance's UUID from OpenStack's own meta_data.json
// (absent: none), as Afterburn does (coreos/afterburn
// src/providers/openstack/network.rs).
func openStackService(ctx context.Context, a *Agent) (metadata, error) {
	root := a.endpoint("openstack", "http://169.254.169.254")
	m, err := a.ec2Metadata(ctx, root+"/latest/meta-data", nil, "hostname", []field{
		{"OPENSTACK_HOSTNAME", "hostname"},
		{"OPENSTACK_INSTANCE_ID", "instance-id"},
		{"OPENSTACK_INSTANCE_TYPE", "instance-type"},
		{"OPENSTACK_IPV4_LOCAL", "local-ipv4"},
		{"OPENSTACK_IPV4_PUBLIC", "public-ipv4"},
	})
	if err != nil {
		return m, err
	}
	doc, err := a.getJSONDoc(ctx, resource.Request{URL: root + "/openstack/2012-08-10/meta_data.json"})
	if errors.Is(err, resource.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if v := jsonGet(doc, "uuid"); len(v) > 0 {
		m.add("OPENSTACK_INSTANCE_UUID", v[0])
	}
	return m, nil
}

func aliyunMetadata(ctx context.Context, a *Agent) (metadata, error) {
	return a.ec2Metadata(ctx, a.endpoint("aliyun", "http://100.100.100.200")+"/latest/meta-data", nil, "hostname", []field{
		{"ALIYUN_HOSTNAME", "hostname"},
		{"ALIYUN_EIPV4", "eipv4"},
		{"ALIYUN_IMAGE_ID", "image-id"},
		{"ALIYUN_INSTANCE_ID", "instance-id"},
		{"ALIYUN_INSTANCE_TYPE", "instance/instance-type"},
		{"ALIYUN_IPV4_PRIVATE", "private-ipv4"},
		{"ALIYUN_IPV4_PUBLIC", "public-ipv4"},
		{"ALIYUN_REGION_ID", "region-id"},
		{"ALIYUN_VPC_ID", "vpc-id"},
		{"ALIYUN_ZONE_ID", "zone-id"},
	})
}

// exoscaleMetadata reads Exoscale's CloudStack-style service.
func exoscaleMetadata(ctx context.Context, a *Agent) (metadata, error) {
	return a.cloudStackStyle(ctx, a.endpoint("exoscale", "http://169.254.169.254")+"/1.0/meta-data", "EXOSCALE_", "PUBLIC_IPV4", "LOCAL_IPV4")
}

// cloudStackService reads the metadata service of CloudStack's virtual
// router, the DHCP server of the instance's lease (as the config provider
// finds it).
func cloudStackService(ctx context.Context, a *Agent) (metadata, error) {
	base := a.d.Endpoints["cloudstack"]
	if base == "" {
		addr, ok := platform.DHCPServerAddress(ctx, platform.Env{Root: a.d.Root})
		if !ok {
			return metadata{}, fmt.Errorf("cloudstack: no DHCP lease names the virtual router (systemd-networkd's or dhclient's files, NetworkManager over D-Bus)")
		}
		base = "http://" + net.JoinHostPort(addr.String(), "80")
	}
	return a.cloudStackStyle(ctx, base+"/latest/meta-data", "CLOUDSTACK_", "IPV4_PUBLIC", "IPV4_LOCAL")
}

// cloudStackStyle reads CloudStack's layout, whose public-keys is the
// keys themselves, one a line. The names of public-ipv4 and local-ipv4
// differ: Afterburn writes EXOSCALE_PUBLIC_IPV4 but CLOUDSTACK_IPV4_PUBLIC
// (coreos/afterburn src/providers/exoscale/mod.rs,
// src/providers/cloudstack/network.rs).
func (a *Agent) cloudStackStyle(ctx context.Context, base, prefix, publicIPv4, localIPv4 string) (metadata, error) {
	var m metadata
	var err error
	if m.hostname, err = a.getText(ctx, base+"/local-hostname", nil); err != nil {
		return m, err
	}
	keys, err := a.getText(ctx, base+"/public-keys", nil)
	if err != nil {
		return m, err
	}
	m.keys = strings.Split(keys, "\n")
	var fields []field
	for _, f := range []string{"availability-zone", "cloud-identifier", "instance-id", "local-hostname", "local-ipv4",
		"public-hostname", "public-ipv4", "service-offering", "vm-id"} {
		name := strings.ToUpper(strings.ReplaceAll(f, "-", "_"))
		switch f {
		case "public-ipv4":
			name = publicIPv4
		case "local-ipv4":
			name = localIPv4
		}
		fields = append(fields, field{prefix + name, f})
	}
	return m, a.readFields(ctx, &m, base, nil, "local-hostname", fields)
}
