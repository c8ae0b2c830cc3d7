package platform

import (
	"slices"
	"sort"
)

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
	{ID: "digitalocean", New: newDigitalOcean, Hostname: true, Metadata: digitalOceanMetadata},
	{ID: "exoscale", New: newExoscale, Hostname: true, Metadata: exoscaleMetadata},
	{ID: "file", New: newFile},
	{ID: "gcp", New: newGCP, Metadata: gcpMetadata},
	{ID: "hetzner", New: newHetzner, Hostname: true, Metadata: hetznerMetadata, Attributes: hetznerAttributes},
	{ID: "hyperv", New: newHyperV},
	{ID: "ibmcloud", New: newIBMCloud, Hostname: true, Metadata: ibmCloudMetadata},
	{ID: "kubevirt", New: newKubeVirt, Hostname: true, Metadata: kubeVirtMetadata},
	{ID: "metal", New: newMetal},
	{ID: "nutanix", New: newNutanix},
	{ID: "nvidiabluefield", New: newNvidiaBlueField},
	{ID: "openstack", New: newOpenStack, Metadata: openStackMetadata},
	{ID: "oraclecloud", New: newOracleCloud, Hostname: true, Metadata: oracleCloudMetadata},
	{ID: "packet", New: newPacket, Metadata: packetMetadata, CheckIn: packetCheckIn, ReportFailure: packetReportFailure},
	{ID: "powervs", New: newPowerVS, Metadata: configDriveOnly},
	{ID: "proxmoxve", New: newProxmoxVE, Hostname: true, Metadata: proxmoxVEMetadata},
	{ID: "qemu", New: newQEMU},
	{ID: "scaleway", New: newScaleway, Hostname: true, Metadata: scalewayMetadata, CheckIn: scalewayCheckIn},
	{ID: "upcloud", New: newUpCloud, Hostname: true, Metadata: upCloudMetadata},
	{ID: "virtualbox", New: newVirtualBox},
	{ID: "vmware", New: newVMware},
	{ID: "vultr", New: newVultr, Hostname: true, Metadata: vultrMetadata},
	{ID: "zvm", New: newZVM},
}

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
