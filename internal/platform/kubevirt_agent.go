package platform

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/flintboot/flint/internal/netconfig"
)

// kubeVirtConfigDrive reads KubeVirt's config-2 drive: meta_data.json, and
// the addresses of network_data.json when there is one.
func (host *Host) kubeVirtConfigDrive(ctx context.Context) (Metadata, error) {
	m, files, err := host.configDriveFiles(ctx, 0, configDriveSpecFor(host.ID), configDriveNetwork)
	if err != nil || files[configDriveNetwork] == nil {
		return m, err
	}
	if err := host.addIPAttrs(&m, files[configDriveNetwork]); err != nil {
		return Metadata{}, fmt.Errorf("%s: config drive %s: %w: %w", host.ID, configDriveNetwork, ErrProtocol, err)
	}
	return m, nil
}

// kubeVirtMetadata reads whichever drive the VM has: the NoCloud volume
// (cidata) or the ConfigDrive volume (config-2).
func kubeVirtMetadata(ctx context.Context, host *Host) (Metadata, error) {
	label, err := findDriveLabel(ctx, host.driveEnv(), append(slices.Clone(cidataLabels), configDriveLabels...), host.wait(configDriveWait))
	if err != nil {
		return host.noDriveNoop(fmt.Errorf("%s: %w", host.ID, err))
	}
	if slices.Contains(configDriveLabels, label) {
		return host.kubeVirtConfigDrive(ctx)
	}
	files, err := host.cidata(ctx, 0, ncNetConfig)
	if err != nil {
		return Metadata{}, err
	}
	doc, id, name, err := host.ncMeta(files, "public-keys", "instance-type")
	if err != nil {
		return Metadata{}, err
	}
	it, err := host.ncString(ncMetaData, doc, "instance-type")
	if err != nil {
		return Metadata{}, err
	}
	m := Metadata{Hostname: name, Keys: doc["public-keys"]}
	m.add("KUBEVIRT_HOSTNAME", name)
	m.add("KUBEVIRT_INSTANCE_ID", id)
	m.add("KUBEVIRT_INSTANCE_TYPE", it)
	return m, host.ncAddrs(&m, files[ncNetConfig])
}

// kubeVirtNetwork reads the links of the network description on the
// drive kubeVirtMetadata reads (config-2's network_data.json, cidata's
// network-config; netconfig.KubeVirtLinks); no drive or no description:
// none, as Afterburn's kubevirt without one.
func kubeVirtNetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	return host.readDriveNetwork(ctx, host.wait(configDriveWait))
}

// driveNetwork is flint's own links (Platform.FlintNetwork) on the
// platforms whose drive holds a network description Afterburn makes
// nothing of (OpenStack's and PowerVS's network_data.json, IBM Cloud
// VPC's network-config): read as KubeVirt's, the one conversion of these
// formats Afterburn has. OpenStack's drive is waited for as briefly as
// for its metadata.
func driveNetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	wait := configDriveWait
	if host.ID == "openstack" {
		wait = openStackDriveWait
	}
	return host.readDriveNetwork(ctx, host.wait(wait))
}

func (host *Host) readDriveNetwork(ctx context.Context, wait time.Duration) (netconfig.Network, error) {
	label, err := findDriveLabel(ctx, host.driveEnv(), append(slices.Clone(cidataLabels), configDriveLabels...), wait)
	if err != nil {
		_, err = host.noDriveNoop(fmt.Errorf("%s: %w", host.ID, err))
		return netconfig.Network{}, err
	}
	file := ncNetConfig
	var files map[string][]byte
	if slices.Contains(configDriveLabels, label) {
		file = configDriveNetwork
		_, files, err = host.configDriveFiles(ctx, 0, jsonSpec{}, file)
	} else {
		files, err = host.cidata(ctx, 0, file)
	}
	if err != nil || files[file] == nil {
		return netconfig.Network{}, err
	}
	tree, err := readYAMLTree(files[file])
	if err != nil {
		return netconfig.Network{}, fmt.Errorf("%s: %s: %w: %w", host.ID, file, ErrProtocol, err)
	}
	c, err := netconfig.Read(tree)
	if err != nil {
		return netconfig.Network{}, fmt.Errorf("%s: %s: %w: %w", host.ID, file, ErrProtocol, err)
	}
	return netconfig.KubeVirtLinks(c), nil
}
