package platform

import (
	"context"
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
