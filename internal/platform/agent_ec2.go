package platform

// AWS, OpenStack's metadata service and Alibaba Cloud serve the EC2
// metadata layout: one value per path under meta-data/, and the SSH keys
// as public-keys/ listing indexes ("0=name" or "0/") whose
// public-keys/<i>/openssh-key is the key.

import (
	"context"
	"net/http"
	"strings"
)

// field is one metadata value read into an attribute.
type field struct{ attr, path string }

// readFields adds each field's value under base as an attribute; absent
// values (404) are left out. The value at hostnamePath is m.Hostname,
// read already: it is not asked for again.
func (host *Host) readFields(ctx context.Context, m *Metadata, base string, h http.Header, hostnamePath string, fields []field) error {
	for _, f := range fields {
		if f.path == hostnamePath {
			m.add(f.attr, m.Hostname)
			continue
		}
		v, err := host.getText(ctx, base+"/"+f.path, h)
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
func (host *Host) ec2Keys(ctx context.Context, base string, h http.Header) ([]string, error) {
	listPath := "/public-keys"
	if host.ID == "aliyun" {
		listPath += "/"
	}
	list, err := host.getText(ctx, base+listPath, h)
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
		k, err := host.getText(ctx, base+"/public-keys/"+i+"/openssh-key", h)
		if err != nil {
			return nil, err
		}
		keys = append(keys, strings.Split(k, "\n")...)
	}
	return keys, nil
}

// ec2Metadata reads hostname, keys and fields from an EC2-style service.
func (host *Host) ec2Metadata(ctx context.Context, base string, h http.Header, hostnamePath string, fields []field) (Metadata, error) {
	var m Metadata
	var err error
	if m.Hostname, err = host.getText(ctx, base+"/"+hostnamePath, h); err != nil {
		return m, err
	}
	if m.Keys, err = host.ec2Keys(ctx, base, h); err != nil {
		return m, err
	}
	return m, host.readFields(ctx, &m, base, h, hostnamePath, fields)
}
