package platform

// OpenStack and CloudStack (when the VM has a config drive), PowerVS and
// KubeVirt put the instance's metadata on a config drive labelled
// config-2, in OpenStack's layout: openstack/latest/meta_data.json holds uuid, hostname,
// availability_zone and public_keys (key name → key). The drive is
// mounted read-only for the time of the read, with the config providers'
// code. OpenStack and CloudStack without a drive have their metadata
// service (agent_ec2.go).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/sys"
)

// configDriveLabels are the config drive's labels: OpenStack's, in either
// case, as the config's provider accepts them.
var configDriveLabels = []string{"config-2", "CONFIG-2"}

const (
	configDriveMetadata = "/openstack/latest/meta_data.json"
	// configDriveNetwork is KubeVirt's network description.
	configDriveNetwork = "/openstack/latest/network_data.json"
	// openStackDriveWait is how long OpenStack's drive may take to show
	// up: the agent runs long after udev has settled, so a drive that is
	// not there by then is not coming, and the metadata service answers.
	openStackDriveWait = 2 * time.Second
	// configDriveWait is how long the platforms that only have the drive
	// wait for it.
	configDriveWait = 30 * time.Second
)

// driveEnv is the environment for mounting a drive: the host's, with
// the system's mounter unless a test gave one.
func (host *Host) driveEnv() Env {
	return withSystemMounter(host.Env)
}

// withSystemMounter returns env with the system's mounter unless it has
// one (the agent's providers are made without).
func withSystemMounter(env Env) Env {
	if env.Mounter == nil {
		env.Mounter = sys.Mounter{}
	}
	return env
}

// configDriveEC2 is the EC2-style metadata OpenStack's config drive holds
// beside its own.
const configDriveEC2 = "/ec2/latest/meta-data.json"

// configDriveSpecFor is what meta_data.json gives on platform id: the
// names are Afterburn's (coreos/afterburn
// src/providers/openstack/configdrive.rs, src/providers/powervs/mod.rs,
// src/providers/kubevirt/cloudconfig.rs), AVAILABILITY_ZONE and PowerVS's
// HOSTNAME are flint's own (FlintOnlyPrefix).
func configDriveSpecFor(id string) jsonSpec {
	prefix := strings.ToUpper(id) + "_"
	spec := jsonSpec{
		Hostname: "hostname",
		Keys:     []string{"public_keys.*"},
		Attrs: []field{
			{prefix + "HOSTNAME", "hostname"},
			{prefix + "INSTANCE_ID", "uuid"},
			{FlintOnlyPrefix + prefix + "AVAILABILITY_ZONE", "availability_zone"},
		},
	}
	switch id {
	case "openstack":
		// The UUID is OPENSTACK_INSTANCE_UUID; OPENSTACK_INSTANCE_ID is
		// the EC2-style id of ec2/latest/meta-data.json (openStackDrive).
		spec.Attrs[1] = field{"OPENSTACK_INSTANCE_UUID", "uuid"}
	case "powervs":
		// PowerVS's hostname is meta_data.json's "name".
		spec.Hostname = "name"
		spec.Attrs[0].attr = FlintOnlyPrefix + spec.Attrs[0].attr
		spec.Attrs = append(spec.Attrs, field{"POWERVS_LOCAL_HOSTNAME", "name"})
	}
	return spec
}

// configDriveSpec reads meta_data.json on the config-2 drive with spec.
func (host *Host) configDriveSpec(ctx context.Context, wait time.Duration, spec jsonSpec) (Metadata, error) {
	m, _, err := host.configDriveFiles(ctx, wait, spec)
	return m, err
}

// configDriveFiles reads meta_data.json on the config-2 drive with spec,
// and the files among more that the drive holds, in one mount.
func (host *Host) configDriveFiles(ctx context.Context, wait time.Duration, spec jsonSpec, more ...string) (Metadata, map[string][]byte, error) {
	env := host.driveEnv()
	var data []byte
	var files map[string][]byte
	var err error
	if len(more) == 0 {
		data, err = readDriveFile(ctx, env, configDriveLabels, configDriveMetadata, wait)
	} else if files, err = readDriveFiles(ctx, env, configDriveLabels, append([]string{configDriveMetadata}, more...), wait); err == nil {
		if data = files[configDriveMetadata]; data == nil {
			err = fmt.Errorf("%s on the config drive: %w", configDriveMetadata, ErrNoConfig)
		}
	}
	if err != nil {
		return Metadata{}, nil, fmt.Errorf("%s: %w", host.ID, err)
	}
	doc, err := decodeJSONDoc(data)
	if err != nil {
		return Metadata{}, nil, fmt.Errorf("%s: config drive %s: %w: %w", host.ID, configDriveMetadata, ErrProtocol, err)
	}
	return spec.read(doc), files, nil
}

// configDriveOnly serves the platforms whose metadata is only on the drive.
func configDriveOnly(ctx context.Context, host *Host) (Metadata, error) {
	return host.configDriveSpec(ctx, host.wait(configDriveWait), configDriveSpecFor(host.ID))
}
