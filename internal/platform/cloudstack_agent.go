package platform

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// cloudStackMetadata reads the config drive when the VM has one, as
// Afterburn's cloudstack-configdrive provider does, and the virtual router's
// metadata service otherwise. CloudStack's ConfigDriveBuilder writes the
// router's values to the drive twice: one file each under
// cloudstack/metadata/ (availability-zone.txt, …), which Afterburn's
// attributes come from (coreos/afterburn
// src/providers/cloudstack/configdrive.rs), and an OpenStack
// meta_data.json (local-hostname as hostname, vm-id as uuid, the keys under
// public_keys), which gives the hostname, the keys, and the attributes a
// drive without the cloudstack/ tree still has. As Afterburn's
// cloudstack-configdrive (host.ID) it reads the drive only.
func cloudStackMetadata(ctx context.Context, host *Host) (Metadata, error) {
	// The files of the drive's cloudstack/metadata/ that Afterburn makes
	// attributes of, with ConfigDriveBuilder's names; Afterburn asks for
	// them with "_" for "-", which a drive may also have.
	values := []string{"availability-zone", "cloud-identifier", "instance-id", "local-hostname", "service-offering", "vm-id"}
	var more []string
	for _, v := range values {
		more = append(more, cloudStackDriveFile(v), cloudStackDriveFile(strings.ReplaceAll(v, "-", "_")))
	}
	m, files, err := host.configDriveFiles(ctx, host.wait(openStackDriveWait), jsonSpec{
		Hostname: "hostname",
		Keys:     []string{"public_keys.*"},
		Attrs: []field{
			{"CLOUDSTACK_AVAILABILITY_ZONE", "availability_zone"},
			{"CLOUDSTACK_LOCAL_HOSTNAME", "hostname"},
			{"CLOUDSTACK_VM_ID", "uuid"},
		},
	}, more...)
	if errors.Is(err, errNoDrive) && host.ID == "cloudstack" {
		host.Logger.Info("no config drive: asking the virtual router", "labels", configDriveLabels)
		return cloudStackService(ctx, host)
	}
	if err != nil {
		return m, err
	}
	fromJSON := map[string]string{}
	for _, at := range m.Attrs {
		fromJSON[at.Name] = at.Value
	}
	m.Attrs = nil
	for _, v := range values {
		name := "CLOUDSTACK_" + strings.ToUpper(strings.ReplaceAll(v, "-", "_"))
		data := files[cloudStackDriveFile(v)]
		if data == nil {
			data = files[cloudStackDriveFile(strings.ReplaceAll(v, "-", "_"))]
		}
		if val := strings.TrimSpace(string(data)); val != "" {
			m.add(name, val)
		} else {
			m.add(name, fromJSON[name])
		}
	}
	return m, nil
}

// cloudStackDriveFile is the path on the config drive of one value.
func cloudStackDriveFile(name string) string { return "/cloudstack/metadata/" + name + ".txt" }

// cloudStackService reads the metadata service of CloudStack's virtual
// router, the DHCP server of the instance's lease (as the config provider
// finds it).
func cloudStackService(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint("")
	if base == "" {
		addr, ok := dhcpServerAddress(ctx, host.Env)
		if !ok {
			return Metadata{}, fmt.Errorf("cloudstack: no DHCP lease names the virtual router (systemd-networkd's or dhclient's files, NetworkManager over D-Bus)")
		}
		base = "http://" + net.JoinHostPort(addr.String(), "80")
	}
	return host.cloudStackStyle(ctx, base+"/latest/meta-data", "CLOUDSTACK_", "IPV4_PUBLIC", "IPV4_LOCAL")
}

// cloudStackStyle reads CloudStack's layout, whose public-keys is the
// keys themselves, one a line. The names of public-ipv4 and local-ipv4
// differ: Afterburn writes EXOSCALE_PUBLIC_IPV4 but CLOUDSTACK_IPV4_PUBLIC
// (coreos/afterburn src/providers/exoscale/mod.rs,
// src/providers/cloudstack/network.rs).
func (host *Host) cloudStackStyle(ctx context.Context, base, prefix, publicIPv4, localIPv4 string) (Metadata, error) {
	var m Metadata
	var err error
	if m.Hostname, err = host.getText(ctx, base+"/local-hostname", nil); err != nil {
		return m, err
	}
	keys, err := host.getText(ctx, base+"/public-keys", nil)
	if err != nil {
		return m, err
	}
	m.Keys = strings.Split(keys, "\n")
	var fields []field
	for _, f := range []string{"availability-zone", "cloud-identifier", "instance-id", "local-hostname", "local-ipv4",
		"public-hostname", "public-ipv4", "service-offering", "vm-id"} {
		name := strings.ToUpper(strings.ReplaceAll(f, "-", "_"))
		switch f {
		case "public-ipv4":
			name = publicIPv4
		case "local-ipv4":
			name = localIPv4
		}
		fields = append(fields, field{prefix + name, f})
	}
	return m, host.readFields(ctx, &m, base, nil, "local-hostname", fields)
}
