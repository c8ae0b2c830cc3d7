package platform

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/netconfig"
	"github.com/flintboot/flint/internal/resource"
)

// upCloudMetadata reads what Afterburn reads, one path each
// (coreos/afterburn src/providers/upcloud/mod.rs): hostname, public_keys
// (one a line), instance_id and region; and, as flint's own attributes, the
// addresses of the JSON document /metadata/v1.json when the service has it.
func upCloudMetadata(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint("http://169.254.169.254") + "/metadata/v1"
	var m Metadata
	var err error
	if m.Hostname, err = host.getText(ctx, base+"/hostname", nil); err != nil {
		return m, err
	}
	keys, err := host.getText(ctx, base+"/public_keys", nil)
	if err != nil {
		return m, err
	}
	m.Keys = keyLines(keys)
	if err := host.readFields(ctx, &m, base, nil, "hostname", []field{
		{"UPCLOUD_HOSTNAME", "hostname"},
		{"UPCLOUD_INSTANCE_ID", "instance_id"},
		{"UPCLOUD_REGION", "region"},
	}); err != nil {
		return m, err
	}
	doc, err := host.getJSONDoc(ctx, resource.Request{URL: base + ".json"})
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
			kind := strings.ToUpper(netconfig.Text(jsonPath(ad, "family")) + "_" + netconfig.Text(jsonPath(f, "type")))
			m.add("FLINT_UPCLOUD_"+kind+"_"+strconv.Itoa(count[kind]), netconfig.Text(jsonPath(ad, "address")))
			count[kind]++
		}
	}
	return m, nil
}
