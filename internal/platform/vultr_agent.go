package platform

import (
	"context"
)

// vultrMetadata reads one value per path; public-keys is one key a line.
func vultrMetadata(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint("http://169.254.169.254") + "/v1"
	var m Metadata
	var err error
	if m.Hostname, err = host.getText(ctx, base+"/hostname", nil); err != nil {
		return m, err
	}
	keys, err := host.getText(ctx, base+"/public-keys", nil)
	if err != nil {
		return m, err
	}
	m.Keys = keyLines(keys)
	return m, host.readFields(ctx, &m, base, nil, "hostname", []field{
		{"VULTR_HOSTNAME", "hostname"},
		{"VULTR_INSTANCE_ID", "instanceid"},
		{"FLINT_VULTR_INSTANCE_V2_ID", "instance-v2-id"}, // flint only,
		{"VULTR_REGION_CODE", "region/regioncode"},
	})
}
