package platform

import (
	"context"
)

func ibmCloudMetadata(ctx context.Context, host *Host) (Metadata, error) {
	files, err := host.cidata(ctx, host.wait(configDriveWait), ncVendorData)
	if err != nil {
		return Metadata{}, err
	}
	_, id, name, err := host.ncMeta(files)
	if err != nil {
		return Metadata{}, err
	}
	m := Metadata{Hostname: name}
	m.add("IBMCLOUD_INSTANCE_ID", id)
	m.add("IBMCLOUD_LOCAL_HOSTNAME", name)
	if vd := files[ncVendorData]; vd != nil {
		if m.Keys, err = host.vendorDataKeys(vd); err != nil {
			return Metadata{}, err
		}
	}
	return m, nil
}
