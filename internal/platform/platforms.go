package platform

import (
	"context"
	"slices"
	"sort"

	"github.com/flintboot/flint/internal/netconfig"
)

// Platform is one row of the platform table: an ignition.platform.id, how
// to make its provider, and what the agent does there.
type Platform struct {
	ID string
	// New makes the provider that reads the platform's config.
	New func(Env) Provider

	// What the agent does there, later in boot. A nil function means the
	// platform does not offer it; tests keep the agent's units' conditions
	// equal to these fields.

	// Hostname: the platform's DHCP gives no hostname, so `flint agent
	// hostname` sets it from metadata (Afterburn's list, coreos/afterburn
	// dracut/30afterburn/afterburn-hostname.service).
	Hostname bool
	// Metadata reads hostname, SSH keys and attributes.
	Metadata func(ctx context.Context, host *Host) (Metadata, error)
	// HostnameOnly, when set, reads just the hostname, from where the
	// platform keeps it apart from the rest (Azure Stack's identity
	// endpoint), so `flint agent hostname` does not make the whole,
	// costlier metadata exchange.
	HostnameOnly func(ctx context.Context, host *Host) (string, error)
	// Attributes, when set, adds attributes that only `flint agent
	// attributes` reads, from an exchange the other commands need not make
	// (Azure's load balancer address from WireServer).
	Attributes func(ctx context.Context, host *Host) ([]Attribute, error)
	// Fragments: `flint agent render-ignition` writes Ignition config
	// fragments (hostname, admin user and keys) from the metadata, as
	// Afterburn 5.11's render-ignition does on its platforms.
	Fragments bool
	// AdminPasswordHash, when set, returns the SHA-512 crypt hash of the
	// admin user's password ("" when the VM has none) for the user
	// fragment (Azure's, from the provisioning medium).
	AdminPasswordHash func(ctx context.Context, host *Host) (string, error)
	// Network, when set, reads the machine's links from the metadata for
	// the network outputs (networkd units, NetworkManager keyfiles,
	// netplan): Afterburn's networks() and virtual_network_devices().
	Network func(ctx context.Context, host *Host) (netconfig.Network, error)
	// FlintNetwork, when set, reads links where Afterburn writes none but
	// the metadata describes the network: `flint agent network-units`
	// and `nm-keyfiles` write them, the afterburn front end does not.
	FlintNetwork func(ctx context.Context, host *Host) (netconfig.Network, error)
	// Netplan is the style of the netplan document `--netplan-config`
	// writes of the Network where Afterburn writes one (NoNetplan
	// elsewhere).
	Netplan netconfig.NetplanStyle
	// NetplanDoc, when set, returns the netplan document itself, where
	// Afterburn's comes from the metadata whole rather than from links
	// (vmware's guestinfo.metadata); nil with no document.
	NetplanDoc func(ctx context.Context, host *Host) ([]byte, error)
	// CheckIn reports a good boot.
	CheckIn func(ctx context.Context, host *Host) error
	// ReportFailure reports a failed provisioning with a short, redacted
	// reason the operator sees in the cloud console.
	ReportFailure func(ctx context.Context, host *Host, reason string) error
}

// platforms is every ignition.platform.id flint knows, in Ignition's
// spelling, with the provider that reads its config and what the agent
// does there. It is the only list: the engine, the agent, flint run's usage
// text, the units' conditions and docs/providers.md's test all read it.
var platforms = []Platform{
	{ID: "akamai", New: newAkamai, Metadata: akamaiMetadata},
	{ID: "aliyun", New: newAliyun, Hostname: true, Metadata: aliyunMetadata},
	{ID: "applehv", New: newAppleHV},
	{ID: "aws", New: newAWS, Metadata: awsMetadata},
	{ID: "azure", New: newAzure, Hostname: true, Fragments: true, AdminPasswordHash: azureAdminPasswordHash, Metadata: azureMetadata, Attributes: azureSharedConfigAttributes, CheckIn: azureCheckIn, ReportFailure: azureReportFailure},
	{ID: "azurestack", New: newAzureStack, Hostname: true, HostnameOnly: azureStackHostname, Metadata: azureStackMetadata, CheckIn: azureCheckIn, ReportFailure: azureReportFailure},
	{ID: "brightbox", New: newBrightbox},
	{ID: "cloudstack", New: newCloudStack, Metadata: cloudStackMetadata},
	{ID: "digitalocean", New: newDigitalOcean, Hostname: true, Metadata: digitalOceanMetadata, Network: digitalOceanNetwork},
	{ID: "exoscale", New: newExoscale, Hostname: true, Metadata: exoscaleMetadata},
	{ID: "file", New: newFile},
	{ID: "gcp", New: newGCP, Metadata: gcpMetadata},
	{ID: "hetzner", New: newHetzner, Hostname: true, Metadata: hetznerMetadata, Attributes: hetznerAttributes, Network: hetznerNetwork, Netplan: netconfig.NetplanHetzner},
	{ID: "hyperv", New: newHyperV},
	{ID: "ibmcloud", New: newIBMCloud, Hostname: true, Metadata: ibmCloudMetadata, FlintNetwork: driveNetwork},
	{ID: "kubevirt", New: newKubeVirt, Hostname: true, Metadata: kubeVirtMetadata, Network: kubeVirtNetwork},
	{ID: "metal", New: newMetal},
	{ID: "nutanix", New: newNutanix},
	{ID: "nvidiabluefield", New: newNvidiaBlueField},
	{ID: "openstack", New: newOpenStack, Metadata: openStackMetadata, FlintNetwork: driveNetwork},
	{ID: "oraclecloud", New: newOracleCloud, Hostname: true, Metadata: oracleCloudMetadata},
	{ID: "packet", New: newPacket, Metadata: packetMetadata, Network: packetNetwork, CheckIn: packetCheckIn, ReportFailure: packetReportFailure},
	{ID: "powervs", New: newPowerVS, Metadata: configDriveOnly, FlintNetwork: driveNetwork},
	{ID: "proxmoxve", New: newProxmoxVE, Hostname: true, Metadata: proxmoxVEMetadata, Network: proxmoxVENetwork, Netplan: netconfig.NetplanProxmoxVE},
	{ID: "qemu", New: newQEMU},
	{ID: "scaleway", New: newScaleway, Hostname: true, Metadata: scalewayMetadata, CheckIn: scalewayCheckIn},
	{ID: "upcloud", New: newUpCloud, Hostname: true, Metadata: upCloudMetadata},
	{ID: "virtualbox", New: newVirtualBox},
	{ID: "vmware", New: newVMware, NetplanDoc: vmwareNetplan},
	{ID: "vultr", New: newVultr, Hostname: true, Metadata: vultrMetadata},
	{ID: "zvm", New: newZVM},
}

// agentOnly are Afterburn's provider names that are no
// ignition.platform.id (coreos/afterburn src/metadata.rs): one source of
// a platform's metadata, or IBM Cloud's classic infrastructure. Only the
// agent knows them (LookupAgent), so `afterburn --provider X` takes every
// name Afterburn takes.
var agentOnly = []Platform{
	{ID: "cloudstack-configdrive", Metadata: cloudStackMetadata},
	{ID: "cloudstack-metadata", Metadata: cloudStackService},
	{ID: "ibmcloud-classic", Metadata: ibmCloudClassicMetadata, Network: ibmCloudClassicNetwork},
	{ID: "openstack-metadata", Metadata: openStackService},
}

// LookupAgent returns the platform with the given id, or Afterburn's
// provider of that name (agentOnly).
func LookupAgent(id string) (Platform, bool) {
	if p, ok := Lookup(id); ok {
		return p, true
	}
	for _, p := range agentOnly {
		if p.ID == id {
			return p, true
		}
	}
	return Platform{}, false
}

// AgentOnly returns Afterburn's provider names that are no platform's,
// with what the agent does there.
func AgentOnly() []Platform { return slices.Clone(agentOnly) }

// Lookup returns the platform with the given id.
func Lookup(id string) (Platform, bool) {
	i := sort.Search(len(platforms), func(i int) bool { return platforms[i].ID >= id })
	if i < len(platforms) && platforms[i].ID == id {
		return platforms[i], true
	}
	return Platform{}, false
}

// IDs lists every platform id, sorted.
func IDs() []string {
	ids := make([]string, len(platforms))
	for i, p := range platforms {
		ids[i] = p.ID
	}
	return ids
}

// All returns every platform's row, sorted by id.
func All() []Platform {
	return slices.Clone(platforms)
}
