package platform

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"time"
)

// ErrNoDrive means no config drive with the wanted label appeared in
// time: the agent then asks the metadata service instead (OpenStack).
var ErrNoDrive = errNoDrive

// ReadConfigDrive returns relPath on the config drive labelled with one
// of labels (the first found; case variants such as config-2 and CONFIG-2),
// mounted read-only with env's Mounter for the time of the read. It
// waits up to wait (0: until ctx ends) for the drive; a missing or empty
// file wraps ErrNoConfig. The agent reads the drive's metadata
// (openstack/latest/meta_data.json) with it.
func ReadConfigDrive(ctx context.Context, env Env, labels []string, relPath string, wait time.Duration) ([]byte, error) {
	return readDriveFile(ctx, env, labels, relPath, wait)
}

// FindConfigDrive waits for a drive labelled with one of labels as
// ReadConfigDrive does and returns the label found (the first of labels
// present). KubeVirt's agent reads whichever of its two drives the VM has.
func FindConfigDrive(ctx context.Context, env Env, labels []string, wait time.Duration) (string, error) {
	dev, err := findDrive(ctx, env, labels, wait)
	if err != nil {
		return "", err
	}
	return filepath.Base(dev), nil
}

// DHCPServerAddress returns the server of the first DHCP lease naming
// one under env's root (package dhcplease): CloudStack's virtual
// router, whose metadata service the agent asks.
func DHCPServerAddress(ctx context.Context, env Env) (netip.Addr, bool) {
	return dhcpServerAddress(ctx, env)
}

// ReadConfigDriveFiles mounts the drive labelled with one of labels
// read-only once and
// returns the contents of each of names (paths on the drive) that exists;
// a missing file is left out of the map. It waits for the drive as
// ReadConfigDrive does. The agent reads a NoCloud (cidata) drive's
// meta-data, user-data and vendor-data with it.
func ReadConfigDriveFiles(ctx context.Context, env Env, labels []string, names []string, wait time.Duration) (map[string][]byte, error) {
	dev, err := findDrive(ctx, env, labels, wait)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	_, err = withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		for _, name := range names {
			data, err := readDriveData(dir, dev, name)
			if errors.Is(err, ErrNoConfig) {
				continue
			}
			if err != nil {
				return nil, err
			}
			files[name] = data
		}
		return nil, nil
	})
	return files, err
}
