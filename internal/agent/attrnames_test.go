//go:build unix

package agent

import (
	"github.com/flintboot/flint/internal/platform"

	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// afterburnNames is, for every platform, the attribute names Afterburn's
// code writes (not its docs/usage/attributes.md, which differs in places),
// with the file they come from at coreos/afterburn 790aa94, and the names
// flint writes besides. "_n" stands for a number from 0.
var afterburnNames = []struct {
	id, source string
	names      []string
	flintOnly  []string
	// elsewhere are Afterburn's names another test checks (the exchange
	// is not a metadata document).
	elsewhere []string
}{
	{id: "akamai", source: "src/providers/akamai/mod.rs",
		names: []string{"INSTANCE_ID", "INSTANCE_HOST_UUID", "INSTANCE_LABEL", "INSTANCE_REGION", "INSTANCE_TYPE", "INSTANCE_TAGS",
			"PUBLIC_IPV4_n", "PRIVATE_IPV4_n", "SHARED_IPV4_n", "IPV6_SLAAC", "IPV6_LINK_LOCAL", "IPV6_RANGE_n", "IPV6_SHARED_RANGE_n"}},
	{id: "aliyun", source: "src/providers/aliyun/mod.rs",
		names: []string{"EIPV4", "HOSTNAME", "IMAGE_ID", "INSTANCE_ID", "INSTANCE_TYPE", "IPV4_PRIVATE", "IPV4_PUBLIC", "REGION_ID", "VPC_ID", "ZONE_ID"}},
	{id: "aws", source: "src/providers/aws/mod.rs",
		names: []string{"INSTANCE_ID", "INSTANCE_TYPE", "IPV4_LOCAL", "IPV4_PUBLIC", "IPV6", "AVAILABILITY_ZONE", "AVAILABILITY_ZONE_ID",
			"HOSTNAME", "PUBLIC_HOSTNAME", "REGION"}},
	{id: "azure", source: "src/providers/microsoft/azure/mod.rs",
		names: []string{"VMSIZE"}, flintOnly: []string{"IPV4_PUBLIC", "LOCATION"},
		elsewhere: []string{"IPV4_DYNAMIC", "IPV4_VIRTUAL"}}, // TestAzureVirtualIPv4, TestAfterburnMockDocuments
	{id: "cloudstack", source: "src/providers/cloudstack/network.rs",
		names: []string{"INSTANCE_ID", "LOCAL_HOSTNAME", "PUBLIC_HOSTNAME", "AVAILABILITY_ZONE", "IPV4_PUBLIC", "IPV4_LOCAL",
			"SERVICE_OFFERING", "CLOUD_IDENTIFIER", "VM_ID"}},
	{id: "digitalocean", source: "src/providers/digitalocean/mod.rs",
		names: []string{"HOSTNAME", "REGION", "IPV4_PUBLIC_n", "IPV6_PUBLIC_n", "IPV4_ANCHOR_n", "IPV4_PRIVATE_n", "IPV6_PRIVATE_n"}},
	{id: "exoscale", source: "src/providers/exoscale/mod.rs",
		names: []string{"INSTANCE_ID", "LOCAL_HOSTNAME", "PUBLIC_HOSTNAME", "AVAILABILITY_ZONE", "PUBLIC_IPV4", "LOCAL_IPV4",
			"SERVICE_OFFERING", "CLOUD_IDENTIFIER", "VM_ID"}},
	{id: "gcp", source: "src/providers/gcp/mod.rs",
		names: []string{"HOSTNAME", "IP_EXTERNAL_0", "IP_LOCAL_0", "MACHINE_TYPE"}, flintOnly: []string{"ZONE"}},
	{id: "hetzner", source: "src/providers/hetzner/mod.rs",
		names: []string{"AVAILABILITY_ZONE", "HOSTNAME", "INSTANCE_ID", "PUBLIC_IPV4", "PUBLIC_IPV6", "REGION", "PRIVATE_IPV4_n"}},
	{id: "openstack", source: "src/providers/openstack/network.rs",
		names: []string{"HOSTNAME", "INSTANCE_ID", "INSTANCE_UUID", "INSTANCE_TYPE", "IPV4_LOCAL", "IPV4_PUBLIC"}},
	{id: "oraclecloud", source: "src/providers/oraclecloud/mod.rs",
		names:     []string{"AVAILABILITY_DOMAIN", "COMPARTMENT_ID", "FAULT_DOMAIN", "HOSTNAME", "INSTANCE_ID", "INSTANCE_SHAPE", "REGION_ID"},
		flintOnly: []string{"IPV4_PRIVATE_n"}},
	{id: "packet", source: "src/providers/packet/mod.rs",
		names: []string{"IPV4_PUBLIC_n", "IPV4_PUBLIC_GATEWAY_n", "IPV4_PRIVATE_n", "IPV4_PRIVATE_GATEWAY_n", "IPV6_PUBLIC_n",
			"IPV6_PUBLIC_GATEWAY_n", "IPV6_PRIVATE_n", "IPV6_PRIVATE_GATEWAY_n", "HOSTNAME", "PHONE_HOME_URL", "PLAN"},
		flintOnly: []string{"FACILITY", "METRO"}},
	{id: "scaleway", source: "src/providers/scaleway/mod.rs",
		names: []string{"HOSTNAME", "INSTANCE_ID", "INSTANCE_TYPE", "ZONE_ID", "IPV4_PRIVATE", "IPV4_PUBLIC", "IPV6_PUBLIC"}},
	{id: "upcloud", source: "src/providers/upcloud/mod.rs",
		names: []string{"HOSTNAME", "INSTANCE_ID", "REGION"}, flintOnly: []string{"IPV4_PUBLIC_n", "IPV4_PRIVATE_n", "IPV6_PUBLIC_n"}},
	{id: "vultr", source: "src/providers/vultr/mod.rs",
		names: []string{"HOSTNAME", "INSTANCE_ID", "REGION_CODE"}, flintOnly: []string{"INSTANCE_V2_ID"}},
	// The drive platforms.
	{id: "ibmcloud", source: "src/providers/ibmcloud/mod.rs", names: []string{"INSTANCE_ID", "LOCAL_HOSTNAME"}},
	{id: "kubevirt", source: "src/providers/kubevirt/cloudconfig.rs", names: []string{"INSTANCE_ID", "HOSTNAME", "INSTANCE_TYPE", "IPV4", "IPV6"}},
	{id: "powervs", source: "src/providers/powervs/mod.rs", names: []string{"INSTANCE_ID", "LOCAL_HOSTNAME"},
		flintOnly: []string{"HOSTNAME", "AVAILABILITY_ZONE"}},
	{id: "proxmoxve", source: "src/providers/proxmoxve/cloudconfig.rs", names: []string{"INSTANCE_ID", "HOSTNAME", "IPV4", "IPV6"}},
}

// everyValue answers every GET under the EC2-style services with a value
// (public-keys lists key 0), so every attribute the agent asks for is
// there.
func everyValue(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/public-keys"), strings.HasSuffix(r.URL.Path, "/public-keys/"):
		w.Write([]byte("0=k"))
	case strings.HasSuffix(r.URL.Path, "/dynamic/instance-identity/document"):
		w.Write([]byte(`{"region":"r"}`))
	case strings.HasSuffix(r.URL.Path, "/openstack/2012-08-10/meta_data.json"):
		w.Write([]byte(`{"uuid":"u-1"}`))
	default:
		w.Write([]byte("v"))
	}
}

// fullDocuments serves, per platform, documents that hold every value
// Afterburn reads.
var fullDocuments = map[string]map[string]string{
	"akamai": {
		"PUT /v1/token":    "TOK",
		"GET /v1/instance": `{"id":1,"host_uuid":"h","label":"l","region":"r","type":"t","tags":["a","b"]}`,
		"GET /v1/network": `{"ipv4":{"public":["1.2.3.4/32"],"private":["192.168.1.1/32"],"shared":["1.2.3.5/32"]},
			"ipv6":{"slaac":"2600::1/128","link_local":"fe80::1/128","ranges":["2600:1::/64"],"shared_ranges":["2600:2::/64"]}}`,
		"GET /v1/ssh-keys": `{"users":{}}`,
	},
	"azure": {"GET /metadata/instance?api-version=2021-02-01": `{"compute":{"location":"l","vmSize":"s","name":"n"},
		"network":{"interface":[{"ipv4":{"ipAddress":[{"privateIpAddress":"10.0.0.4","publicIpAddress":"20.0.0.4"}]}}]}}`},
	"digitalocean": {"GET /metadata/v1.json": `{"hostname":"h","region":"r","interfaces":{"public":[{"ipv4":{"ip_address":"1.2.3.4"},
		"anchor_ipv4":{"ip_address":"10.0.0.1"},"ipv6":{"ip_address":"2a03::1"}}],"private":[{"ipv4":{"ip_address":"10.1.0.1"},"ipv6":{"ip_address":"fd00::1"}}]}}`},
	"hetzner": {
		"GET /hetzner/v1/metadata": "availability-zone: z\nhostname: h\ninstance-id: 1\npublic-ipv4: 1.2.3.4\nregion: r\n" +
			"network-config:\n  config:\n    - type: physical\n      subnets:\n        - ipv6: true\n          address: 2a01::1/64\n",
		"GET /hetzner/v1/metadata/private-networks": "- ip: 10.0.0.2\n",
	},
	"oraclecloud": {
		"GET /opc/v2/instance": `{"availabilityDomain":"a","canonicalRegionName":"r","compartmentId":"c","faultDomain":"f","id":"i","hostname":"h","shape":"s"}`,
		"GET /opc/v2/vnics/":   `[{"privateIp":"10.0.0.2"}]`,
	},
	"packet": {"GET /metadata": `{"hostname":"h","plan":"p","facility":"f","metro":"m","phone_home_url":"http://x/phone-home","network":{"addresses":[
		{"address":"1.2.3.4","gateway":"1.2.3.1","public":true,"address_family":4},{"address":"10.0.0.2","gateway":"10.0.0.1","public":false,"address_family":4},
		{"address":"2604::2","gateway":"2604::1","public":true,"address_family":6},{"address":"fd00::2","gateway":"fd00::1","public":false,"address_family":6}]}}`},
	"scaleway": {"GET /conf?format=json": `{"id":"i","hostname":"h","commercial_type":"t","private_ip":"10.0.0.1","public_ip":{"address":"1.2.3.4"},
		"ipv6":{"address":"2001::1"},"location":{"zone_id":"z"}}`},
	"upcloud": {"GET /metadata/v1/hostname": "h", "GET /metadata/v1/instance_id": "i", "GET /metadata/v1/region": "r",
		"GET /metadata/v1.json": `{"hostname":"h","instance_id":"i","region":"r","network":{"interfaces":[
		{"type":"public","ip_addresses":[{"address":"1.2.3.4","family":"IPv4"},{"address":"2a04::1","family":"IPv6"}]},
		{"type":"private","ip_addresses":[{"address":"10.0.0.2","family":"IPv4"}]}]}}`},
}

// driveDocuments are the drive platforms' documents with every value.
var driveDocuments = map[string]struct {
	label string
	files map[string]string
}{
	"ibmcloud": {"cidata", map[string]string{"meta-data": "instance-id: i\nlocal-hostname: h\n"}},
	"kubevirt": {"cidata", map[string]string{"meta-data": "instance-id: i\nlocal-hostname: h\ninstance-type: t\n",
		"network-config": "version: 2\nethernets:\n  eth0:\n    addresses: [10.0.0.2/24, 'fd00::2/64']\n"}},
	"powervs": {"config-2", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}},
	"proxmoxve": {"cidata", map[string]string{"meta-data": "instance-id: i\n", "user-data": "#cloud-config\nhostname: h\n",
		"network-config": proxmoxStaticNetworkConfig}},
}

// TestAfterburnAttributeNames: the names the agent writes are Afterburn's
// (plus those marked flint's own), for every platform, and every name
// Afterburn's code writes is written when the service has its value.
func TestAfterburnAttributeNames(t *testing.T) {
	numbered := regexp.MustCompile(`_[0-9]+$`)
	for _, row := range afterburnNames {
		t.Run(row.id, func(t *testing.T) {
			prefix := strings.ToUpper(row.id) + "_"
			var a *Agent
			switch d, ok := driveDocuments[row.id]; {
			case ok:
				root, mounter := driveRoot(t, d.label, d.files)
				a = newTestAgent(t, row.id, "http://127.0.0.1:1", root)
				a.d.Mounter = mounter
			default:
				routes := map[string]http.HandlerFunc{}
				for route, body := range fullDocuments[row.id] {
					routes[route] = platformtest.Answer(200, body)
				}
				var f *platformtest.Service
				if len(routes) == 0 {
					f = platformtest.NewService(t, nil)
					f.Config.Handler = http.HandlerFunc(everyValue)
				} else {
					f = platformtest.NewService(t, routes)
				}
				a = newTestAgent(t, row.id, f.URL, t.TempDir())
			}
			m, err := a.fetchMetadata(context.Background(), "test")
			if err != nil {
				t.Fatalf("metadata: %v", err)
			}
			if row.id == "hetzner" {
				more, err := a.platform.Attributes(context.Background(), a.host())
				if err != nil {
					t.Fatalf("attributes: %v", err)
				}
				m.Attrs = append(m.Attrs, more...)
			}
			// Afterburn's names come without a prefix (written as FLINT_
			// and AFTERBURN_), flint's own with FLINT_ (written only so).
			var got, gotFlint []string
			for _, at := range m.Attrs {
				list := &got
				name, own := strings.CutPrefix(at.Name, platform.FlintOnlyPrefix)
				if own {
					list = &gotFlint
				}
				name, ok := strings.CutPrefix(name, prefix)
				if !ok {
					t.Errorf("%s: not prefixed %s", at.Name, prefix)
				}
				if row.id != "gcp" {
					name = numbered.ReplaceAllString(name, "_n")
				}
				if !slices.Contains(*list, name) {
					*list = append(*list, name)
				}
			}
			for _, n := range got {
				if !slices.Contains(row.names, n) {
					t.Errorf("flint writes AFTERBURN_%s%s, which Afterburn's %s does not (flint's own must be named FLINT_%s%[2]s)", prefix, n, row.source, prefix)
				}
			}
			for _, n := range gotFlint {
				if !slices.Contains(row.flintOnly, n) {
					t.Errorf("flint writes FLINT_%s%s as its own, which the table does not mark as flint's own", prefix, n)
				}
			}
			for _, n := range row.names {
				if !slices.Contains(got, n) {
					t.Errorf("Afterburn's %s writes %s%s, flint does not (wrote %q)", row.source, prefix, n, got)
				}
			}
		})
	}
}

// TestAfterburnNamesCoverTable: every platform with metadata has a row.
func TestAfterburnNamesCoverTable(t *testing.T) {
	for _, p := range platform.All() {
		if p.Metadata == nil || p.ID == "azurestack" {
			continue // Azure Stack has no attributes, in Afterburn or flint
		}
		if !slices.ContainsFunc(afterburnNames, func(r struct {
			id, source string
			names      []string
			flintOnly  []string
			elsewhere  []string
		}) bool {
			return r.id == p.ID
		}) {
			t.Errorf("platform %s has no row in afterburnNames", p.ID)
		}
	}
}
