package platform

import (
	"context"
	"fmt"

	"github.com/flintboot/flint/internal/netconfig"
)

func proxmoxVEMetadata(ctx context.Context, host *Host) (Metadata, error) {
	files, err := host.cidata(ctx, host.wait(configDriveWait), ncUserData, ncNetConfig)
	if err != nil {
		return host.noDriveNoop(err)
	}
	_, id, _, err := host.ncMeta(files)
	if err != nil {
		return Metadata{}, err
	}
	var m Metadata
	if ud := files[ncUserData]; isCloudConfig(ud) {
		doc, err := host.ncKeys(ncUserData, ud, "hostname", "fqdn", "ssh_authorized_keys")
		if err != nil {
			return Metadata{}, err
		}
		if m.Hostname, err = host.ncString(ncUserData, doc, "hostname"); err != nil {
			return Metadata{}, err
		}
		if m.Hostname == "" {
			if m.Hostname, err = host.ncString(ncUserData, doc, "fqdn"); err != nil {
				return Metadata{}, err
			}
		}
		m.Keys = doc["ssh_authorized_keys"]
	} else {
		host.Logger.Info("user-data on the cidata drive is not #cloud-config: no hostname nor SSH keys there")
	}
	m.add("PROXMOXVE_INSTANCE_ID", id)
	m.add("PROXMOXVE_HOSTNAME", m.Hostname)
	return m, host.ncAddrs(&m, files[ncNetConfig])
}

// proxmoxVENetwork reads the links of the cidata drive's network-config
// (netconfig.ProxmoxVELinks); without the drive or the file, none, as
// Afterburn's proxmoxve without a drive writes nothing.
func proxmoxVENetwork(ctx context.Context, host *Host) (netconfig.Network, error) {
	files, err := host.cidata(ctx, host.wait(configDriveWait), ncNetConfig)
	if err != nil {
		_, err = host.noDriveNoop(err)
		return netconfig.Network{}, err
	}
	if files[ncNetConfig] == nil {
		return netconfig.Network{}, nil
	}
	fail := func(err error) (netconfig.Network, error) {
		return netconfig.Network{}, fmt.Errorf("%s: cidata drive %s: %w: %w", host.ID, ncNetConfig, ErrProtocol, err)
	}
	tree, err := readYAMLTree(files[ncNetConfig])
	if err != nil {
		return fail(err)
	}
	c, err := netconfig.Read(tree)
	if err != nil {
		return fail(err)
	}
	n, err := netconfig.ProxmoxVELinks(c)
	if err != nil {
		return fail(err)
	}
	return n, nil
}
