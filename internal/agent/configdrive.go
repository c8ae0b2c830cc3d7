package agent

// OpenStack and CloudStack (when the VM has a config drive), PowerVS and
// KubeVirt put the instance's metadata on a config drive labelled
// config-2, in OpenStack's layout: openstack/latest/meta_data.json holds uuid, hostname,
// availability_zone and public_keys (key name → key). The drive is
// mounted read-only for the time of the read, with the config providers'
// code. OpenStack and CloudStack without a drive have their metadata
// service (ec2.go).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/platform"
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

// driveWait returns how long to wait for a config drive: Deps.DriveWait
// or def.
func (a *Agent) driveWait(def time.Duration) time.Duration {
	if a.d.DriveWait != 0 {
		return a.d.DriveWait
	}
	return def
}

// driveEnv is the providers' environment for mounting a drive: the
// target root, Deps.Mounter (the system's by default) and the log.
func (a *Agent) driveEnv() platform.Env {
	mounter := a.d.Mounter
	if mounter == nil {
		mounter = sys.Mounter{}
	}
	return platform.Env{Root: a.d.Root, Mounter: mounter, Logger: a.log}
}

// configDriveEC2 is the EC2-style metadata OpenStack's config drive holds
// beside its own.
const configDriveEC2 = "/ec2/latest/meta-data.json"

// configDriveSpecFor is what meta_data.json gives on platform id: the
// names are Afterburn's (coreos/afterburn
// src/providers/openstack/configdrive.rs, src/providers/powervs/mod.rs,
// src/providers/kubevirt/cloudconfig.rs), AVAILABILITY_ZONE and PowerVS's
// HOSTNAME are flint's own.
func configDriveSpecFor(id string) jsonSpec {
	prefix := strings.ToUpper(id) + "_"
	spec := jsonSpec{
		hostname: "hostname",
		keys:     []string{"public_keys.*"},
		attrs: []field{
			{prefix + "HOSTNAME", "hostname"},
			{prefix + "INSTANCE_ID", "uuid"},
			{prefix + "AVAILABILITY_ZONE", "availability_zone"},
		},
	}
	switch id {
	case "openstack":
		// The UUID is OPENSTACK_INSTANCE_UUID; OPENSTACK_INSTANCE_ID is
		// the EC2-style id of ec2/latest/meta-data.json (openStackDrive).
		spec.attrs[1] = field{"OPENSTACK_INSTANCE_UUID", "uuid"}
	case "powervs":
		// PowerVS's hostname is meta_data.json's "name".
		spec.hostname = "name"
		spec.attrs = append(spec.attrs, field{"POWERVS_LOCAL_HOSTNAME", "name"})
	}
	return spec
}

// configDriveSpec reads meta_data.json on the config-2 drive with spec.
func (a *Agent) configDriveSpec(ctx context.Context, wait time.Duration, spec jsonSpec) (metadata, error) {
	m, _, err := a.configDriveFiles(ctx, wait, spec)
	return m, err
}

// configDriveFiles reads meta_data.json on the config-2 drive with spec,
// and the files among more that the drive holds, in one mount.
func (a *Agent) configDriveFiles(ctx context.Context, wait time.Duration, spec jsonSpec, more ...string) (metadata, map[string][]byte, error) {
	env := a.driveEnv()
	var data []byte
	var files map[string][]byte
	var err error
	if len(more) == 0 {
		data, err = platform.ReadConfigDrive(ctx, env, configDriveLabels, configDriveMetadata, wait)
	} else if files, err = platform.ReadConfigDriveFiles(ctx, env, configDriveLabels, append([]string{configDriveMetadata}, more...), wait); err == nil {
		if data = files[configDriveMetadata]; data == nil {
			err = fmt.Errorf("%s on the config drive: %w", configDriveMetadata, platform.ErrNoConfig)
		}
	}
	if err != nil {
		return metadata{}, nil, fmt.Errorf("%s: %w", a.platform.id, err)
	}
	doc, err := decodeJSONDoc(data)
	if err != nil {
		return metadata{}, nil, fmt.Errorf("%s: config drive %s: %w: %w", a.platform.id, configDriveMetadata, ErrProtocol, err)
	}
	return spec.read(doc), files, nil
}

// kubeVirtConfigDrive reads KubeVirt's config-2 drive: meta_data.json, and
// the addresses of network_data.json when there is one.
func (a *Agent) kubeVirtConfigDrive(ctx context.Context) (metadata, error) {
	m, files, err := a.configDriveFiles(ctx, 0, configDriveSpecFor(a.platform.id), configDriveNetwork)
	if err != nil || files[configDriveNetwork] == nil {
		return m, err
	}
	ifaces, err := a.netInterfaces(files[configDriveNetwork])
	if err != nil {
		return metadata{}, fmt.Errorf("%s: config drive %s: %w: %w", a.platform.id, configDriveNetwork, ErrProtocol, err)
	}
	m.addIPAttrs(ifaces, "KUBEVIRT_", true)
	return m, nil
}

// configDriveOnly serves the platforms whose metadata is only on the drive.
func configDriveOnly(ctx context.Context, a *Agent) (metadata, error) {
	return a.configDriveSpec(ctx, a.driveWait(configDriveWait), configDriveSpecFor(a.platform.id))
}

// openStackDrive reads OpenStack's config drive: meta_data.json, and the
// EC2-style ec2/latest/meta-data.json when the drive has it, for the
// attributes Afterburn takes from there (coreos/afterburn
// src/providers/openstack/configdrive.rs).
func (a *Agent) openStackDrive(ctx context.Context) (metadata, error) {
	m, files, err := a.configDriveFiles(ctx, a.driveWait(openStackDriveWait), configDriveSpecFor("openstack"), configDriveEC2)
	if err != nil || files[configDriveEC2] == nil {
		return m, err
	}
	doc, err := decodeJSONDoc(files[configDriveEC2])
	if err != nil {
		return metadata{}, fmt.Errorf("%s: config drive %s: %w: %w", a.platform.id, configDriveEC2, ErrProtocol, err)
	}
	ec2 := jsonSpec{attrs: []field{
		{"OPENSTACK_INSTANCE_ID", "instance-id"},
		{"OPENSTACK_INSTANCE_TYPE", "instance-type"},
		{"OPENSTACK_IPV4_LOCAL", "local-ipv4"},
		{"OPENSTACK_IPV4_PUBLIC", "public-ipv4"},
	}}.read(doc)
	m.attrs = append(m.attrs, ec2.attrs...)
	return m, nil
}

// openStackMetadata reads the config drive when the VM has one, as Afterburn
// does, and the metadata service otherwise.
func openStackMetadata(ctx context.Context, a *Agent) (metadata, error) {
	m, err := a.openStackDrive(ctx)
	if !errors.Is(err, platform.ErrNoDrive) {
		return m, err
	}
	a.log.Info("no config drive: asking the metadata service", "labels", configDriveLabels)
	return openStackService(ctx, a)
}

// cloudStackMetadata reads the config drive when the VM has one, as
// Afterburn's cloudstack-configdrive provider does, and the virtual router's
// metadata service otherwise. CloudStack's ConfigDriveBuilder writes the
// drive's meta_data.json from the router's values: local-hostname as
// hostname, vm-id as uuid, the keys under public_keys; the attributes keep
// the router's names.
func cloudStackMetadata(ctx context.Context, a *Agent) (metadata, error) {
	m, err := a.configDriveSpec(ctx, a.driveWait(openStackDriveWait), jsonSpec{
		hostname: "hostname",
		keys:     []string{"public_keys.*"},
		attrs: []field{
			{"CLOUDSTACK_AVAILABILITY_ZONE", "availability_zone"},
			{"CLOUDSTACK_LOCAL_HOSTNAME", "hostname"},
			{"CLOUDSTACK_VM_ID", "uuid"},
		},
	})
	if !errors.Is(err, platform.ErrNoDrive) {
		return m, err
	}
	a.log.Info("no config drive: asking the virtual router", "labels", configDriveLabels)
	return cloudStackService(ctx, a)
}
