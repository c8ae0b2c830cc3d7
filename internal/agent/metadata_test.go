//go:build unix

package agent

import (
	"github.com/flintboot/flint/internal/platform"

	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// metadataCase is one platform's metadata service as the real one
// answers, and what the agent must make of it.
type metadataCase struct {
	routes map[string]http.HandlerFunc
	// header must be on every request.
	header       http.Header
	wantHostname string
	wantKeys     []string
	wantAttrs    []string // NAME=value; {{URL}} is the fake's URL
	// withHook adds the attributes only `flint agent attributes` reads
	// (platform.attributes).
	withHook bool
}

// need answers body only to requests carrying header h (name: value), as
// services that check them do; others get status.
func need(name, value string, status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(name) != value {
			w.WriteHeader(status)
			return
		}
		w.Write([]byte(body))
	}
}

var metadataCases = map[string]metadataCase{
	"cloudstack": {
		routes: map[string]http.HandlerFunc{
			"GET /latest/meta-data/local-hostname":   platformtest.Answer(200, "cs-1"),
			"GET /latest/meta-data/public-keys":      platformtest.Answer(200, "ssh-rsa AAAA cs\n"),
			"GET /latest/meta-data/instance-id":      platformtest.Answer(200, "7f2c"),
			"GET /latest/meta-data/service-offering": platformtest.Answer(200, "Small Instance"),
			"GET /latest/meta-data/local-ipv4":       platformtest.Answer(200, "10.1.1.20"),
		},
		wantHostname: "cs-1",
		wantKeys:     []string{"ssh-rsa AAAA cs"},
		wantAttrs: []string{"CLOUDSTACK_INSTANCE_ID=7f2c", "CLOUDSTACK_LOCAL_HOSTNAME=cs-1",
			"CLOUDSTACK_IPV4_LOCAL=10.1.1.20", "CLOUDSTACK_SERVICE_OFFERING=Small Instance"},
	},
	"akamai": {
		routes: map[string]http.HandlerFunc{
			"PUT /v1/token":    need("Metadata-Token-Expiry-Seconds", "300", 400, "TOK"),
			"GET /v1/instance": need("Metadata-Token", "TOK", 401, `{"id":123,"host_uuid":"h-1","label":"linode123","region":"us-ord","type":"g6-nanode-1","tags":[]}`),
			"GET /v1/network": need("Metadata-Token", "TOK", 401, `{"interfaces":[],"ipv4":{"public":["172.232.1.2/32"],"private":["192.168.1.2/17"],"shared":[]},
				"ipv6":{"slaac":"2600:3c06::1/128","link_local":"fe80::1/128","ranges":[]}}`),
			"GET /v1/ssh-keys": need("Metadata-Token", "TOK", 401, `{"users":{"root":["ssh-ed25519 AAAA root"],"alice":["ssh-rsa BBBB alice"]}}`),
		},
		wantHostname: "linode123",
		wantKeys:     []string{"ssh-rsa BBBB alice", "ssh-ed25519 AAAA root"},
		wantAttrs: []string{"AKAMAI_INSTANCE_ID=123", "AKAMAI_INSTANCE_HOST_UUID=h-1", "AKAMAI_INSTANCE_LABEL=linode123",
			"AKAMAI_INSTANCE_REGION=us-ord", "AKAMAI_INSTANCE_TYPE=g6-nanode-1", "AKAMAI_PUBLIC_IPV4_0=172.232.1.2/32",
			"AKAMAI_PRIVATE_IPV4_0=192.168.1.2/17", "AKAMAI_IPV6_SLAAC=2600:3c06::1/128", "AKAMAI_IPV6_LINK_LOCAL=fe80::1/128",
			// No tags: Afterburn writes the attribute empty.
			"AKAMAI_INSTANCE_TAGS="},
	},
	// No IPv6: Afterburn still writes the SLAAC and link-local attributes,
	// empty.
	"akamai without ipv6": {
		routes: map[string]http.HandlerFunc{
			"PUT /v1/token":    platformtest.Answer(200, "TOK"),
			"GET /v1/instance": platformtest.Answer(200, `{"id":7,"host_uuid":"h-7","label":"l7","region":"r","type":"t","tags":["a","b"]}`),
			"GET /v1/network":  platformtest.Answer(200, `{"interfaces":[],"ipv4":{"public":[],"private":[],"shared":[]},"ipv6":{"slaac":"","link_local":"","ranges":[],"shared_ranges":[]}}`),
		},
		wantHostname: "l7",
		wantAttrs: []string{"AKAMAI_INSTANCE_ID=7", "AKAMAI_INSTANCE_HOST_UUID=h-7", "AKAMAI_INSTANCE_LABEL=l7",
			"AKAMAI_INSTANCE_REGION=r", "AKAMAI_INSTANCE_TYPE=t", "AKAMAI_IPV6_SLAAC=", "AKAMAI_IPV6_LINK_LOCAL=", "AKAMAI_INSTANCE_TAGS=a:b"},
	},
	"oraclecloud": {
		routes: map[string]http.HandlerFunc{
			"GET /opc/v2/instance": platformtest.Failing(1, 429, platformtest.Answer(200, `{"id":"ocid1.instance.oc1..a","hostname":"oci-1","shape":"VM.Standard.E2.1.Micro",
				"canonicalRegionName":"eu-frankfurt-1","availabilityDomain":"Uocm:EU-FRANKFURT-1-AD-1","faultDomain":"FAULT-DOMAIN-2",
				"metadata":{"ssh_authorized_keys":"ssh-rsa AAAA oci\nssh-ed25519 BBBB oci2"}}`)),
			"GET /opc/v2/vnics/": platformtest.Answer(200, `[{"vnicId":"ocid1.vnic","privateIp":"10.0.0.10","macAddr":"02:00:17:00:00:01"}]`),
		},
		header:       http.Header{"Authorization": {"Bearer Oracle"}},
		wantHostname: "oci-1",
		wantKeys:     []string{"ssh-rsa AAAA oci", "ssh-ed25519 BBBB oci2"},
		wantAttrs: []string{"ORACLECLOUD_AVAILABILITY_DOMAIN=Uocm:EU-FRANKFURT-1-AD-1", "ORACLECLOUD_FAULT_DOMAIN=FAULT-DOMAIN-2",
			"ORACLECLOUD_HOSTNAME=oci-1", "ORACLECLOUD_INSTANCE_ID=ocid1.instance.oc1..a", "ORACLECLOUD_INSTANCE_SHAPE=VM.Standard.E2.1.Micro",
			"ORACLECLOUD_REGION_ID=eu-frankfurt-1", "FLINT_ORACLECLOUD_IPV4_PRIVATE_0=10.0.0.10"},
	},
	"aws": {
		routes: map[string]http.HandlerFunc{
			"PUT /latest/api/token":                                    need("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600", 400, "TOKEN"),
			"GET /2021-01-03/meta-data/hostname":                       platformtest.Answer(200, "ip-10-0-0-5.ec2.internal"),
			"GET /2021-01-03/meta-data/public-keys":                    platformtest.Answer(200, "0=main\n1=backup"),
			"GET /2021-01-03/meta-data/public-keys/0/openssh-key":      platformtest.Answer(200, "ssh-ed25519 AAAA main\n"),
			"GET /2021-01-03/meta-data/public-keys/1/openssh-key":      platformtest.Answer(200, "ssh-rsa BBBB backup"),
			"GET /2021-01-03/meta-data/local-ipv4":                     platformtest.Answer(200, "10.0.0.5"),
			"GET /2021-01-03/meta-data/placement/availability-zone":    platformtest.Answer(200, "us-east-1a"),
			"GET /2021-01-03/meta-data/placement/availability-zone-id": platformtest.Answer(200, "use1-az6"),
			"GET /2021-01-03/dynamic/instance-identity/document":       platformtest.Answer(200, `{"region":"us-east-1","instanceId":"i-0abc"}`),
			"GET /2021-01-03/meta-data/instance-id":                    platformtest.Answer(200, "i-0abc"),
			"GET /2021-01-03/meta-data/instance-type":                  platformtest.Answer(200, "t3.micro"),
		},
		wantHostname: "ip-10-0-0-5.ec2.internal",
		wantKeys:     []string{"ssh-ed25519 AAAA main", "ssh-rsa BBBB backup"},
		wantAttrs: []string{"AWS_HOSTNAME=ip-10-0-0-5.ec2.internal", "AWS_IPV4_LOCAL=10.0.0.5",
			"AWS_AVAILABILITY_ZONE=us-east-1a", "AWS_AVAILABILITY_ZONE_ID=use1-az6",
			"AWS_INSTANCE_ID=i-0abc", "AWS_INSTANCE_TYPE=t3.micro", "AWS_REGION=us-east-1"},
	},
	"azure": {
		routes: map[string]http.HandlerFunc{
			"GET /metadata/instance?api-version=2021-02-01": platformtest.Failing(1, 410, platformtest.Answer(200, `{"compute":{"location":"westeurope","vmSize":"Standard_B1s",
				"name":"vmss_3","osProfile":{"adminUsername":"core","computerName":"vm-1"},
				"publicKeys":[{"keyData":"ssh-rsa AAAA azure","path":"/home/core/.ssh/authorized_keys"},
					{"keyData":"ssh-rsa AAAAB3Nza\r\nC1yc2E folded@host\r\n","path":"/home/core/.ssh/authorized_keys"}]},
				"network":{"interface":[{"ipv4":{"ipAddress":[{"privateIpAddress":"10.1.0.4","publicIpAddress":"20.1.2.3"}]}}]}}`)),
		},
		header: http.Header{"Metadata": {"true"}},
		// The hostname is compute.name, as Afterburn reads it
		// (coreos/afterburn src/providers/microsoft/azure/mod.rs,
		// fetch_hostname), not the guest's computerName: they differ on
		// scale-set instances and VMs made with --computer-name.
		wantHostname: "vmss_3",
		// A keyData folded over lines is one key, joined as Afterburn
		// joins it.
		wantKeys:  []string{"ssh-rsa AAAA azure", "ssh-rsa AAAAB3NzaC1yc2E folded@host"},
		wantAttrs: []string{"FLINT_AZURE_IPV4_PUBLIC=20.1.2.3", "AZURE_VMSIZE=Standard_B1s", "FLINT_AZURE_LOCATION=westeurope"},
	},
	"azure without osProfile": {
		routes: map[string]http.HandlerFunc{
			"GET /metadata/instance?api-version=2021-02-01": platformtest.Answer(200, `{"compute":{"name":"vm-2","vmSize":"Standard_B1s","publicKeys":[]}}`),
		},
		header:       http.Header{"Metadata": {"true"}},
		wantHostname: "vm-2",
		wantAttrs:    []string{"AZURE_VMSIZE=Standard_B1s"},
	},
	"gcp": {
		routes: map[string]http.HandlerFunc{
			"GET /computeMetadata/v1/instance/hostname":                                          platformtest.Answer(200, "vm.c.proj.internal"),
			"GET /computeMetadata/v1/instance/attributes/ssh-keys":                               platformtest.Answer(200, "alice:ssh-ed25519 AAAA alice\nbob:ssh-rsa BBBB bob"),
			"GET /computeMetadata/v1/project/attributes/ssh-keys":                                platformtest.Answer(200, "carol:ssh-rsa CCCC carol\n"),
			"GET /computeMetadata/v1/instance/network-interfaces/0/ip":                           platformtest.Answer(200, "10.128.0.2"),
			"GET /computeMetadata/v1/instance/network-interfaces/0/access-configs/0/external-ip": platformtest.Answer(200, "34.1.2.3"),
			"GET /computeMetadata/v1/instance/machine-type":                                      platformtest.Answer(200, "projects/1/machineTypes/e2-small"),
			"GET /computeMetadata/v1/instance/zone":                                              platformtest.Answer(200, "projects/1/zones/europe-west1-b"),
		},
		header:       http.Header{"Metadata-Flavor": {"Google"}},
		wantHostname: "vm.c.proj.internal",
		wantKeys:     []string{"ssh-ed25519 AAAA alice", "ssh-rsa BBBB bob", "ssh-rsa CCCC carol"},
		wantAttrs: []string{"GCP_HOSTNAME=vm.c.proj.internal", "GCP_IP_EXTERNAL_0=34.1.2.3", "GCP_IP_LOCAL_0=10.128.0.2",
			"GCP_MACHINE_TYPE=projects/1/machineTypes/e2-small", "FLINT_GCP_ZONE=projects/1/zones/europe-west1-b"},
	},
	"gcp blocking project keys": {
		routes: map[string]http.HandlerFunc{
			"GET /computeMetadata/v1/instance/hostname":                          platformtest.Answer(200, "vm"),
			"GET /computeMetadata/v1/instance/attributes/block-project-ssh-keys": platformtest.Answer(200, "TRUE"),
			"GET /computeMetadata/v1/instance/attributes/sshKeys":                platformtest.Answer(200, "alice:ssh-ed25519 AAAA alice"),
			"GET /computeMetadata/v1/project/attributes/ssh-keys":                platformtest.Answer(200, "carol:ssh-rsa CCCC carol\n"),
		},
		header:       http.Header{"Metadata-Flavor": {"Google"}},
		wantHostname: "vm",
		wantKeys:     []string{"ssh-ed25519 AAAA alice"},
		wantAttrs:    []string{"GCP_HOSTNAME=vm"},
	},
	// The instance's legacy sshKeys, when it has any, are the only keys
	// (coreos/afterburn src/providers/gcp/mod.rs, fetch_all_ssh_keys).
	"gcp legacy instance keys": {
		routes: map[string]http.HandlerFunc{
			"GET /computeMetadata/v1/instance/hostname":            platformtest.Answer(200, "vm"),
			"GET /computeMetadata/v1/instance/attributes/sshKeys":  platformtest.Answer(200, "alice:ssh-ed25519 AAAA alice"),
			"GET /computeMetadata/v1/instance/attributes/ssh-keys": platformtest.Answer(200, "bob:ssh-rsa BBBB bob"),
			"GET /computeMetadata/v1/project/attributes/ssh-keys":  platformtest.Answer(200, "carol:ssh-rsa CCCC carol\n"),
		},
		header:       http.Header{"Metadata-Flavor": {"Google"}},
		wantHostname: "vm",
		wantKeys:     []string{"ssh-ed25519 AAAA alice"},
		wantAttrs:    []string{"GCP_HOSTNAME=vm"},
	},
	"digitalocean": {
		routes: map[string]http.HandlerFunc{
			"GET /metadata/v1.json": platformtest.Answer(200, `{"droplet_id":1,"hostname":"drop","region":"ams3","public_keys":["ssh-ed25519 AAAA do"],
				"interfaces":{"public":[{"ipv4":{"ip_address":"1.2.3.4"},"anchor_ipv4":{"ip_address":"10.18.0.5"},"ipv6":{"ip_address":"2a03::1"}}],
				"private":[{"ipv4":{"ip_address":"10.110.0.2"}}]}}`),
		},
		wantHostname: "drop",
		wantKeys:     []string{"ssh-ed25519 AAAA do"},
		wantAttrs: []string{"DIGITALOCEAN_HOSTNAME=drop", "DIGITALOCEAN_IPV4_ANCHOR_0=10.18.0.5", "DIGITALOCEAN_IPV4_PUBLIC_0=1.2.3.4",
			"DIGITALOCEAN_IPV6_PUBLIC_0=2a03::1", "DIGITALOCEAN_IPV4_PRIVATE_0=10.110.0.2", "DIGITALOCEAN_REGION=ams3"},
	},
	// DigitalOcean spells addresses out in full and upper case; Afterburn
	// parses them (IpAddr) and writes them back in canonical form (RFC
	// 5952), numbered by the interface's index.
	"digitalocean spelled": {
		routes: map[string]http.HandlerFunc{
			"GET /metadata/v1.json": platformtest.Answer(200, `{"hostname":"drop","region":"nyc3","public_keys":[],
				"interfaces":{"public":[{"ipv4":{"ip_address":"104.131.20.105"},"ipv6":{"ip_address":"2604:A880:0800:0000:1000:0000:0000:0000"}}],
				"private":[{"ipv4":{"ip_address":"10.132.0.2"}},{"ipv6":{"ip_address":"FD00:0000:0000:0000:0000:0000:0000:0001"}}]}}`),
		},
		wantHostname: "drop",
		wantAttrs: []string{"DIGITALOCEAN_HOSTNAME=drop", "DIGITALOCEAN_IPV4_PUBLIC_0=104.131.20.105",
			"DIGITALOCEAN_IPV6_PUBLIC_0=2604:a880:800:0:1000::", "DIGITALOCEAN_IPV4_PRIVATE_0=10.132.0.2",
			"DIGITALOCEAN_IPV6_PRIVATE_1=fd00::1", "DIGITALOCEAN_REGION=nyc3"},
	},
	"packet": {
		header:       http.Header{"Accept": {"*/*"}},
		wantHostname: "worker-1",
		wantKeys:     []string{testKeyOne, testKeyTwo},
		wantAttrs: []string{"PACKET_HOSTNAME=worker-1", "PACKET_PHONE_HOME_URL={{URL}}/phone-home", "PACKET_PLAN=c3.small.x86", "FLINT_PACKET_FACILITY=am6", "FLINT_PACKET_METRO=am",
			"PACKET_IPV4_PUBLIC_0=147.75.1.2", "PACKET_IPV4_PUBLIC_GATEWAY_0=147.75.1.1",
			"PACKET_IPV6_PUBLIC_0=2604:1380::2", "PACKET_IPV6_PUBLIC_GATEWAY_0=2604:1380::1",
			"PACKET_IPV4_PRIVATE_0=10.70.1.2", "PACKET_IPV4_PRIVATE_GATEWAY_0=10.70.1.1"},
	},
	"scaleway": {
		routes: map[string]http.HandlerFunc{
			"GET /conf?format=json": platformtest.Answer(200, `{"id":"9f1b","hostname":"scw-1","commercial_type":"DEV1-S","private_ip":"10.1.1.1",
				"public_ip":{"address":"51.1.2.3"},"ipv6":null,"location":{"zone_id":"fr-par-1"},
				"ssh_public_keys":[{"key":"ssh-ed25519 AAAA scw","fingerprint":"256 MD5:aa"}]}`),
		},
		wantHostname: "scw-1",
		wantKeys:     []string{"ssh-ed25519 AAAA scw"},
		wantAttrs: []string{"SCALEWAY_HOSTNAME=scw-1", "SCALEWAY_INSTANCE_ID=9f1b", "SCALEWAY_INSTANCE_TYPE=DEV1-S",
			"SCALEWAY_IPV4_PRIVATE=10.1.1.1", "SCALEWAY_IPV4_PUBLIC=51.1.2.3", "SCALEWAY_ZONE_ID=fr-par-1"},
	},
	"hetzner": {
		routes: map[string]http.HandlerFunc{
			"GET /hetzner/v1/metadata/hostname":    platformtest.Answer(200, "hz-1"),
			"GET /hetzner/v1/metadata/public-keys": platformtest.Answer(200, `["ssh-ed25519 AAAA hz"]`),
			"GET /hetzner/v1/metadata": platformtest.Answer(200, "availability-zone: fsn1-dc14\nhostname: hz-1\ninstance-id: 4242\nlocal-ipv4: ''\n"+
				"network-config:\n  version: 1\n  config:\n    - type: physical\n      name: eth0\n      subnets:\n        - type: dhcp\n          ipv4: true\n"+
				"        - type: static\n          address: 2a01:4f8::1/64\n          ipv6: true\npublic-ipv4: 5.6.7.8\npublic-keys:\n  - ssh-ed25519 AAAA hz\nregion: eu-central\n"),
			"GET /hetzner/v1/metadata/private-networks": platformtest.Answer(200, "- ip: 10.0.0.2\n  alias_ips: []\n- ip: 10.128.0.2\n"),
		},
		withHook:     true,
		wantHostname: "hz-1",
		wantKeys:     []string{"ssh-ed25519 AAAA hz"},
		wantAttrs: []string{"HETZNER_AVAILABILITY_ZONE=fsn1-dc14", "HETZNER_HOSTNAME=hz-1", "HETZNER_INSTANCE_ID=4242",
			"HETZNER_PUBLIC_IPV4=5.6.7.8", "HETZNER_PUBLIC_IPV6=2a01:4f8::1", "HETZNER_REGION=eu-central",
			"HETZNER_PRIVATE_IPV4_0=10.0.0.2", "HETZNER_PRIVATE_IPV4_1=10.128.0.2"},
	},
	// A private network without an address leaves a gap in the numbers,
	// as Afterburn's enumerate() does; the IPv6 address is written in
	// canonical form, and may come without a prefix length.
	"hetzner gaps": {
		routes: map[string]http.HandlerFunc{
			"GET /hetzner/v1/metadata/hostname": platformtest.Answer(200, "hz-2"),
			"GET /hetzner/v1/metadata": platformtest.Answer(200, "hostname: hz-2\nnetwork-config:\n  config:\n    - type: physical\n      subnets:\n"+
				"        - type: static\n          address: 2A01:04F8:0000:0000:0000:0000:0000:0001\n          ipv6: true\n"),
			"GET /hetzner/v1/metadata/private-networks": platformtest.Answer(200, "- alias_ips: []\n- ip: 10.128.0.2\n"),
		},
		withHook:     true,
		wantHostname: "hz-2",
		wantAttrs:    []string{"HETZNER_HOSTNAME=hz-2", "HETZNER_PUBLIC_IPV6=2a01:4f8::1", "HETZNER_PRIVATE_IPV4_1=10.128.0.2"},
	},
	"openstack": {
		routes: map[string]http.HandlerFunc{
			"GET /latest/meta-data/hostname":                  platformtest.Answer(200, "os-1.novalocal"),
			"GET /latest/meta-data/public-keys":               platformtest.Answer(200, "0=mykey"),
			"GET /latest/meta-data/public-keys/0/openssh-key": platformtest.Answer(200, "ssh-rsa AAAA os"),
			"GET /latest/meta-data/instance-id":               platformtest.Answer(200, "i-0001"),
			"GET /latest/meta-data/instance-type":             platformtest.Answer(200, "m1.small"),
			"GET /latest/meta-data/local-ipv4":                platformtest.Answer(200, "192.168.0.5"),
			"GET /openstack/2012-08-10/meta_data.json":        platformtest.Answer(200, `{"uuid":"99dcf33b-6eb5-4acf-9abb-d81723e0c949","name":"os-1"}`),
		},
		wantHostname: "os-1.novalocal",
		wantKeys:     []string{"ssh-rsa AAAA os"},
		wantAttrs: []string{"OPENSTACK_HOSTNAME=os-1.novalocal", "OPENSTACK_INSTANCE_ID=i-0001",
			"OPENSTACK_INSTANCE_TYPE=m1.small", "OPENSTACK_IPV4_LOCAL=192.168.0.5", "OPENSTACK_INSTANCE_UUID=99dcf33b-6eb5-4acf-9abb-d81723e0c949"},
	},
	"aliyun": {
		routes: map[string]http.HandlerFunc{
			"GET /latest/meta-data/hostname":                  platformtest.Answer(200, "ali-1"),
			"GET /latest/meta-data/public-keys/":              platformtest.Answer(200, "0/\n"),
			"GET /latest/meta-data/public-keys/0/openssh-key": platformtest.Answer(200, "ssh-rsa AAAA ali"),
			"GET /latest/meta-data/instance-id":               platformtest.Answer(200, "i-bp1"),
			"GET /latest/meta-data/instance/instance-type":    platformtest.Answer(200, "ecs.t5"),
			"GET /latest/meta-data/region-id":                 platformtest.Answer(200, "cn-hangzhou"),
		},
		wantHostname: "ali-1",
		wantKeys:     []string{"ssh-rsa AAAA ali"},
		wantAttrs:    []string{"ALIYUN_HOSTNAME=ali-1", "ALIYUN_INSTANCE_ID=i-bp1", "ALIYUN_INSTANCE_TYPE=ecs.t5", "ALIYUN_REGION_ID=cn-hangzhou"},
	},
	"exoscale": {
		routes: map[string]http.HandlerFunc{
			"GET /1.0/meta-data/local-hostname":    platformtest.Answer(200, "exo-1"),
			"GET /1.0/meta-data/public-keys":       platformtest.Answer(200, "ssh-ed25519 AAAA exo\nssh-rsa BBBB exo2\n"),
			"GET /1.0/meta-data/instance-id":       platformtest.Answer(200, "b2c3"),
			"GET /1.0/meta-data/availability-zone": platformtest.Answer(200, "ch-gva-2"),
			"GET /1.0/meta-data/service-offering":  platformtest.Answer(200, "Micro"),
		},
		wantHostname: "exo-1",
		wantKeys:     []string{"ssh-ed25519 AAAA exo", "ssh-rsa BBBB exo2"},
		wantAttrs: []string{"EXOSCALE_AVAILABILITY_ZONE=ch-gva-2", "EXOSCALE_INSTANCE_ID=b2c3",
			"EXOSCALE_LOCAL_HOSTNAME=exo-1", "EXOSCALE_SERVICE_OFFERING=Micro"},
	},
	"vultr": {
		routes: map[string]http.HandlerFunc{
			"GET /v1/hostname":          platformtest.Answer(200, "vultr-1"),
			"GET /v1/public-keys":       platformtest.Answer(200, "ssh-ed25519 AAAA v\n"),
			"GET /v1/instanceid":        platformtest.Answer(200, "123"),
			"GET /v1/instance-v2-id":    platformtest.Answer(200, "a-b-c"),
			"GET /v1/region/regioncode": platformtest.Answer(200, "AMS"),
		},
		wantHostname: "vultr-1",
		wantKeys:     []string{"ssh-ed25519 AAAA v"},
		wantAttrs:    []string{"VULTR_HOSTNAME=vultr-1", "VULTR_INSTANCE_ID=123", "FLINT_VULTR_INSTANCE_V2_ID=a-b-c", "VULTR_REGION_CODE=AMS"},
	},
	"upcloud": {
		routes: map[string]http.HandlerFunc{
			"GET /metadata/v1/hostname":    platformtest.Answer(200, "up-1"),
			"GET /metadata/v1/instance_id": platformtest.Answer(200, "00ab"),
			"GET /metadata/v1/region":      platformtest.Answer(200, "fi-hel1"),
			"GET /metadata/v1/public_keys": platformtest.Answer(200, "ssh-rsa AAAA up\n"),
			"GET /metadata/v1.json": platformtest.Answer(200, `{"hostname":"up-1","instance_id":"00ab","region":"fi-hel1","public_keys":["ssh-rsa AAAA up"],
				"network":{"interfaces":[{"type":"public","ip_addresses":[{"address":"94.1.2.3","family":"IPv4"},{"address":"2a04::1","family":"IPv6"}]},
				{"type":"utility","ip_addresses":[{"address":"10.3.0.2","family":"IPv4"}]}]}}`),
		},
		wantHostname: "up-1",
		wantKeys:     []string{"ssh-rsa AAAA up"},
		wantAttrs: []string{"UPCLOUD_HOSTNAME=up-1", "UPCLOUD_INSTANCE_ID=00ab", "UPCLOUD_REGION=fi-hel1",
			"FLINT_UPCLOUD_IPV4_PUBLIC_0=94.1.2.3", "FLINT_UPCLOUD_IPV6_PUBLIC_0=2a04::1", "FLINT_UPCLOUD_IPV4_UTILITY_0=10.3.0.2"},
	},
}

func TestMetadata(t *testing.T) {
	for name, tc := range metadataCases {
		t.Run(name, func(t *testing.T) {
			id, _, _ := strings.Cut(name, " ")
			var f *platformtest.Service
			if id == "packet" {
				f = packetService(t, nil, nil)
			} else {
				f = platformtest.NewService(t, tc.routes)
			}
			a := newTestAgent(t, id, f.URL, t.TempDir())
			m, err := a.fetchMetadata(context.Background(), "test")
			if err != nil {
				t.Fatalf("metadata: %v", err)
			}
			if tc.withHook {
				more, err := a.platform.Attributes(context.Background(), a.host())
				if err != nil {
					t.Fatalf("attributes: %v", err)
				}
				m.Attrs = append(m.Attrs, more...)
			}
			if m.Hostname != tc.wantHostname {
				t.Errorf("hostname = %q, want %q", m.Hostname, tc.wantHostname)
			}
			keys := slices.DeleteFunc(m.Keys, func(k string) bool { return k == "" })
			if !slices.Equal(keys, tc.wantKeys) {
				t.Errorf("keys = %q, want %q", keys, tc.wantKeys)
			}
			var attrs []string
			for _, at := range m.Attrs {
				attrs = append(attrs, at.Name+"="+at.Value)
			}
			var want []string
			for _, kv := range tc.wantAttrs {
				want = append(want, strings.ReplaceAll(kv, "{{URL}}", f.URL))
			}
			if !slices.Equal(attrs, want) {
				t.Errorf("attributes =\n%q\nwant\n%q", attrs, want)
			}
			for _, r := range f.Requests() {
				for k := range tc.header {
					if r.Header.Get(k) != tc.header.Get(k) {
						t.Errorf("%s %s: %s = %q, want %q", r.Method, r.URI, k, r.Header.Get(k), tc.header.Get(k))
					}
				}
				if id == "aws" && r.Method == "GET" && r.Header.Get("X-Aws-Ec2-Metadata-Token") != "TOKEN" {
					t.Errorf("%s: no IMDSv2 token", r.URI)
				}
			}
		})
	}
}

// Every platform whose metadata the agent reads is tested above.
func TestPlatformTable(t *testing.T) {
	for _, p := range platform.All() {
		// Drive platforms are tested in TestConfigDriveMetadata and TestNoCloud*.
		_, ok := metadataCases[p.ID]
		if p.ID == "kubevirt" || p.ID == "powervs" || p.ID == "proxmoxve" || p.ID == "ibmcloud" {
			ok = true
		}
		// Azure Stack's WireServer needs openssl in the fake: TestAzureStack*.
		ok = ok || p.ID == "azurestack"
		if p.Metadata != nil && !ok {
			t.Errorf("platform %s reads metadata but has no case in metadataCases", p.ID)
		}
	}
}

// urlRecorder is a Getter that records the URLs asked for and fails.
type urlRecorder struct{ urls []string }

func (r *urlRecorder) Get(_ context.Context, req resource.Request) ([]byte, error) {
	r.urls = append(r.urls, req.URL)
	return nil, errors.New("unreachable")
}

// CloudStack's metadata service is the virtual router, the DHCP server of
// the lease.
func TestCloudStackRouter(t *testing.T) {
	root := t.TempDir()
	a, _ := New(Deps{Root: root, Getter: &urlRecorder{}, DriveWait: time.Millisecond}, "cloudstack")
	if _, err := a.fetchMetadata(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), "no DHCP lease") {
		t.Errorf("without a lease: %v, want an error saying so", err)
	}
	os.MkdirAll(filepath.Join(root, "run/systemd/netif/leases"), 0o755)
	os.WriteFile(filepath.Join(root, "run/systemd/netif/leases/2"), []byte("ADDRESS=10.1.1.20\nSERVER_ADDRESS=10.1.1.1\n"), 0o644)
	rec := &urlRecorder{}
	a, _ = New(Deps{Root: root, Getter: rec, DriveWait: time.Millisecond}, "cloudstack")
	a.fetchMetadata(context.Background(), "test")
	if len(rec.urls) == 0 || rec.urls[0] != "http://10.1.1.1:80/latest/meta-data/local-hostname" {
		t.Errorf("asked %v, want the router's local-hostname first", rec.urls)
	}
}
