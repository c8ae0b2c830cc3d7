package platform

import (
	"context"
	"errors"
	"fmt"

	"github.com/flintboot/flint/internal/resource"
)

// openStackDrive reads OpenStack's config drive: meta_data.json, and the
// EC2-style ec2/latest/meta-data.json when the drive has it, for the
// attributes Afterburn takes from there (coreos/afterburn
// src/providers/openstack/configdrive.rs).
func (host *Host) openStackDrive(ctx context.Context) (Metadata, error) {
	m, files, err := host.configDriveFiles(ctx, host.wait(openStackDriveWait), configDriveSpecFor("openstack"), configDriveEC2)
	if err != nil || files[configDriveEC2] == nil {
		return m, err
	}
	doc, err := decodeJSONDoc(files[configDriveEC2])
	if err != nil {
		return Metadata{}, fmt.Errorf("%s: config drive %s: %w: %w", host.ID, configDriveEC2, ErrProtocol, err)
	}
	ec2 := jsonSpec{Attrs: []field{
		{"OPENSTACK_INSTANCE_ID", "instance-id"},
		{"OPENSTACK_INSTANCE_TYPE", "instance-type"},
		{"OPENSTACK_IPV4_LOCAL", "local-ipv4"},
		{"OPENSTACK_IPV4_PUBLIC", "public-ipv4"},
	}}.read(doc)
	m.Attrs = append(m.Attrs, ec2.Attrs...)
	return m, nil
}

// openStackMetadata reads the config drive when the VM has one, as Afterburn
// does, and the metadata service otherwise.
func openStackMetadata(ctx context.Context, host *Host) (Metadata, error) {
	m, err := host.openStackDrive(ctx)
	if !errors.Is(err, errNoDrive) {
		return m, err
	}
	host.Logger.Info("no config drive: asking the metadata service", "labels", configDriveLabels)
	return openStackService(ctx, host)
}

// openStackService reads OpenStack's metadata service: the EC2-style
// values, and the instance's UUID from OpenStack's own meta_data.json
// (absent: none), as Afterburn does (coreos/afterburn
// src/providers/openstack/network.rs).
func openStackService(ctx context.Context, host *Host) (Metadata, error) {
	root := host.endpoint(resource.LinkLocalMetadata)
	m, err := host.ec2Metadata(ctx, root+"/latest/meta-data", nil, "hostname", []field{
		{"OPENSTACK_HOSTNAME", "hostname"},
		{"OPENSTACK_INSTANCE_ID", "instance-id"},
		{"OPENSTACK_INSTANCE_TYPE", "instance-type"},
		{"OPENSTACK_IPV4_LOCAL", "local-ipv4"},
		{"OPENSTACK_IPV4_PUBLIC", "public-ipv4"},
	})
	if err != nil {
		return m, err
	}
	doc, err := host.getJSONDoc(ctx, resource.Request{URL: root + "/openstack/2012-08-10/meta_data.json"})
	if errors.Is(err, resource.ErrNotFound) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if v := jsonGet(doc, "uuid"); len(v) > 0 {
		m.add("OPENSTACK_INSTANCE_UUID", v[0])
	}
	return m, nil
}
