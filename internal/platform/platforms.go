package platform

import "sort"

// platforms is every ignition.platform.id flint knows, in Ignition's
// spelling, with the provider that reads its config. It is the only list:
// the engine, flint run's usage text and docs/providers.md's test all read it.
var platforms = []Platform{
	{ID: "akamai", New: newAkamai},
	{ID: "aliyun", New: newAliyun},
	{ID: "applehv", New: newAppleHV},
	{ID: "aws", New: newAWS},
	{ID: "azure", New: newAzure},
	{ID: "azurestack", New: newAzureStack},
	{ID: "brightbox", New: newBrightbox},
	{ID: "cloudstack", New: newCloudStack},
	{ID: "digitalocean", New: newDigitalOcean},
	{ID: "exoscale", New: newExoscale},
	{ID: "file", New: newFile},
	{ID: "gcp", New: newGCP},
	{ID: "hetzner", New: newHetzner},
	{ID: "hyperv", New: newHyperV},
	{ID: "ibmcloud", New: newIBMCloud},
	{ID: "kubevirt", New: newKubeVirt},
	{ID: "metal", New: newMetal},
	{ID: "nutanix", New: newNutanix},
	{ID: "nvidiabluefield", New: newNvidiaBlueField},
	{ID: "openstack", New: newOpenStack},
	{ID: "oraclecloud", New: newOracleCloud},
	{ID: "packet", New: newPacket},
	{ID: "powervs", New: newPowerVS},
	{ID: "proxmoxve", New: newProxmoxVE},
	{ID: "qemu", New: newQEMU},
	{ID: "scaleway", New: newScaleway},
	{ID: "upcloud", New: newUpCloud},
	{ID: "virtualbox", New: newVirtualBox},
	{ID: "vmware", New: newVMware},
	{ID: "vultr", New: newVultr},
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
