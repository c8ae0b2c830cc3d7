package agent

import "context"

// metadata is what a platform's metadata service says about the instance.
type metadata struct {
	hostname string
	// adminUser is the user the platform's console created the instance
	// for (Azure's osProfile.adminUsername), "" when it names none.
	adminUser string
	// keys are SSH public keys, one authorized_keys line each.
	keys []string
	// attrs are the instance's attributes in the order they are written;
	// names are Afterburn's without its prefix (AWS_INSTANCE_ID).
	attrs []attribute
}

// attribute is one KEY=VALUE line of the attributes file.
type attribute struct{ name, value string }

// add appends the attribute when the service gave a value.
func (m *metadata) add(name, value string) {
	if value != "" {
		m.attrs = append(m.attrs, attribute{name, value})
	}
}

// duties is one row of the table: what the agent does on a platform.
// A nil function means the platform does not offer it.
type duties struct {
	id string
	// hostname: the platform's DHCP gives no hostname, so `flint agent
	// hostname` sets it from metadata (Afterburn's list, coreos/afterburn
	// dracut/30afterburn/afterburn-hostname.service).
	hostname bool
	// metadata reads hostname, SSH keys and attributes.
	metadata func(ctx context.Context, a *Agent) (metadata, error)
	// hostnameOnly, when set, reads just the hostname, from where the
	// platform keeps it apart from the rest (Azure Stack's identity
	// endpoint), so `flint agent hostname` does not make the whole,
	// costlier metadata exchange.
	hostnameOnly func(ctx context.Context, a *Agent) (string, error)
	// attributes, when set, adds attributes that only `flint agent
	// attributes` reads, from an exchange the other commands need not make
	// (Azure's load balancer address from WireServer).
	attributes func(ctx context.Context, a *Agent) ([]attribute, error)
	// fragments: `flint agent render-ignition` writes Ignition config
	// fragments (hostname, admin user and keys) from the metadata, as
	// Afterburn 5.11's render-ignition does on its platforms.
	fragments bool
	// checkIn reports a good boot.
	checkIn func(ctx context.Context, a *Agent) error
	// reportFailure reports a failed provisioning with a short, redacted
	// reason the operator sees in the cloud console.
	reportFailure func(ctx context.Context, a *Agent, reason string) error
}

// platforms is every platform the agent does something on; the others
// (qemu, metal, file, …) need nothing from it. Config deletion is not
// listed: it follows from the config provider (DeleteConfig).
var platforms = []duties{
	{id: "akamai", metadata: akamaiMetadata},
	{id: "aliyun", hostname: true, metadata: aliyunMetadata},
	{id: "aws", metadata: awsMetadata},
	{id: "azure", hostname: true, fragments: true, metadata: azureMetadata, attributes: azureVirtualIPv4, checkIn: azureCheckIn, reportFailure: azureReportFailure},
	{id: "azurestack", hostname: true, hostnameOnly: azureStackHostname, metadata: azureStackMetadata, checkIn: azureCheckIn, reportFailure: azureReportFailure},
	{id: "cloudstack", metadata: cloudStackMetadata},
	{id: "digitalocean", hostname: true, metadata: digitalOceanMetadata},
	{id: "exoscale", hostname: true, metadata: exoscaleMetadata},
	{id: "gcp", metadata: gcpMetadata},
	{id: "hetzner", hostname: true, metadata: hetznerMetadata, attributes: hetznerAttributes},
	{id: "ibmcloud", hostname: true, metadata: ibmCloudMetadata},
	{id: "kubevirt", hostname: true, metadata: kubeVirtMetadata},
	{id: "openstack", metadata: openStackMetadata},
	{id: "oraclecloud", hostname: true, metadata: oracleCloudMetadata},
	{id: "packet", metadata: packetMetadata, checkIn: packetCheckIn, reportFailure: packetReportFailure},
	{id: "powervs", metadata: configDriveOnly},
	{id: "proxmoxve", hostname: true, metadata: proxmoxVEMetadata},
	{id: "scaleway", hostname: true, metadata: scalewayMetadata, checkIn: scalewayCheckIn},
	{id: "upcloud", hostname: true, metadata: upCloudMetadata},
	{id: "vultr", hostname: true, metadata: vultrMetadata},
}

// lookup returns the row of id. A known platform without a row (qemu)
// gets an empty one: nothing to do there but delete the config.
func lookup(id string) (duties, bool) {
	for _, p := range platforms {
		if p.id == id {
			return p, true
		}
	}
	if knownPlatform(id) {
		return duties{id: id}, true
	}
	return duties{}, false
}
