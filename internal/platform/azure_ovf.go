package platform

// The Azure provisioning medium: a CD-ROM the fabric attaches at boot,
// UDF on Azure and UDF or ISO 9660 on Azure Stack, holding ovf-env.xml and,
// when the VM was created with custom data, CustomData.bin (the custom data
// decoded, as the fabric wrote it).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

const (
	// ovfEnvFile marks a drive as the provisioning medium: other CD-ROMs
	// (an installer ISO, a user's data disc) are skipped.
	ovfEnvFile = "ovf-env.xml"
	// customDataFile holds the custom data, the user config.
	customDataFile = "CustomData.bin"
	// ovfPollInterval is how often Ignition rescans the CD-ROM
	// drives until the medium shows up.
	ovfPollInterval = time.Second
)

// cdromStatus is a CD-ROM drive's answer to CDROM_DRIVE_STATUS
// (<linux/cdrom.h>).
type cdromStatus int

// Drive statuses, in <linux/cdrom.h> order.
const (
	cdsNoInfo cdromStatus = iota
	cdsNoDisc
	cdsTrayOpen
	cdsDriveNotReady
	cdsDiscOK
)

func (s cdromStatus) String() string {
	switch s {
	case cdsNoInfo:
		return "no info"
	case cdsNoDisc:
		return "no disc"
	case cdsTrayOpen:
		return "tray open"
	case cdsDriveNotReady:
		return "not ready"
	case cdsDiscOK:
		return "disc ok"
	}
	return fmt.Sprintf("status %d", int(s))
}

// driveStatusFunc asks a CD-ROM drive whether it holds a readable disc.
// The real one is an ioctl (azure_ovf_linux.go); tests pass a fake.
type driveStatusFunc func(dev string) (cdromStatus, error)

// ovfFilesystems are the filesystems the provisioning medium may carry.
var ovfFilesystems = []string{"udf", "iso9660"}

// readAzureOVFCustomData finds the provisioning CD-ROM among /dev/sr* (a
// drive whose status is DISC_OK, with a UDF or ISO 9660 filesystem that
// holds ovf-env.xml), rescanning every second until one appears, and
// returns its CustomData.bin. A missing or empty CustomData.bin is
// ErrNoConfig. It waits until ctx ends, or env.Wait when set (then the
// error wraps errNoDrive).
func readAzureOVFCustomData(ctx context.Context, env Env) ([]byte, error) {
	return readOVFMedia(ctx, env, cdromDriveStatus)
}

// readOVFMedia is readAzureOVFCustomData with the drive status check
// passed in.
func readOVFMedia(ctx context.Context, env Env, status driveStatusFunc) ([]byte, error) {
	return readOVFFile(ctx, env, status, customDataFile)
}

// readOVFFile reads name (CustomData.bin, ovf-env.xml) from the
// provisioning medium, found as readAzureOVFCustomData finds it. A missing
// or empty file is ErrNoConfig.
func readOVFFile(ctx context.Context, env Env, status driveStatusFunc, name string) ([]byte, error) {
	log := env.logger().With("op", "azure provisioning media")
	var (
		data    []byte
		readErr error
		seen    = map[string]string{} // device → last reason skipped, to log changes only
	)
	scan := func() bool {
		devs, err := filepath.Glob(env.path("/dev/sr*"))
		if err != nil {
			// Only a malformed pattern fails Glob.
			readErr = err
			return true
		}
		sort.Strings(devs)
		for _, dev := range devs {
			d, skip, err := readOVFDrive(env, dev, status, name)
			if skip != "" {
				if seen[dev] != skip {
					log.Info("not the provisioning media", "device", dev, "reason", skip)
					seen[dev] = skip
				}
				continue
			}
			data, readErr = d, err
			return true
		}
		return false
	}
	wait := env.wait(0)
	ok, err := pollUntil(ctx, wait, ovfPollInterval, scan)
	if err != nil {
		return nil, fmt.Errorf("waiting for the azure provisioning media: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("azure provisioning media after %v: %w", wait, errNoDrive)
	}
	return data, readErr
}

// readOVFDrive reads name from dev if dev is the provisioning medium;
// otherwise it says in skip why not.
func readOVFDrive(env Env, dev string, status driveStatusFunc, name string) (data []byte, skip string, err error) {
	st, serr := status(dev)
	if serr != nil {
		return nil, fmt.Sprintf("drive status: %v", serr), nil
	}
	if st != cdsDiscOK {
		return nil, "drive status: " + st.String(), nil
	}
	data, err = withDrive(env, dev, ovfFilesystems, func(dir string) ([]byte, error) {
		if _, err := os.Stat(filepath.Join(dir, ovfEnvFile)); err != nil {
			return nil, errNotOVF
		}
		return readDriveData(dir, dev, name)
	})
	switch {
	case errors.Is(err, errNotOVF):
		return nil, "no " + ovfEnvFile, nil
	case errors.Is(err, errUnknownFS), errors.Is(err, fs.ErrNotExist):
		// Not udf/iso9660, or the drive went away between the glob and
		// the probe.
		return nil, err.Error(), nil
	case err != nil && !errors.Is(err, ErrNoConfig):
		// A mount or read failure on a drive with a disc: try again on
		// the next scan rather than fail the boot on a transient error.
		// The reason names the root cause only (the full error holds the
		// mount point, new on every scan), so it is logged once.
		return nil, "cannot mount or read it: " + rootCause(err).Error(), nil
	}
	return data, "", err
}

// rootCause unwraps err to the error at the bottom of its chain.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// errNotOVF means a mounted CD-ROM has no ovf-env.xml.
var errNotOVF = errors.New("not an OVF environment medium")
