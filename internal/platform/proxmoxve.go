package platform

// Proxmox VE attaches a NoCloud drive (label cidata) built from the VM's
// cloud-init settings. /user-data is usually Proxmox's own #cloud-config;
// an Ignition config goes in a custom user-data or vendor-data snippet
// (qm set --cicustom). flint reads /user-data, then /vendor-data, and takes
// the first that is neither empty nor #cloud-config, as Ignition does.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flintboot/flint/internal/netconfig"
)

// proxmoxDriveWait is how long Ignition waits for the cidata drive
// before it boots without a config.
const proxmoxDriveWait = 30 * time.Second

// proxmoxFiles are read in this order: user-data wins over vendor-data.
var proxmoxFiles = []string{"/user-data", "/vendor-data"}

type proxmoxProvider struct{ env Env }

// newProxmoxVE reads the user config from the cidata drive. No drive
// within 30 seconds, or only empty and #cloud-config files on it, is an
// empty config.
func newProxmoxVE(env Env) Provider { return proxmoxProvider{env: env} }

func (p proxmoxProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "proxmoxve")
	dev, err := findDrive(ctx, p.env, []string{"cidata"}, p.env.wait(proxmoxDriveWait))
	if errors.Is(err, errNoDrive) {
		log.Info("cidata drive did not appear in time: booting with an empty config", "error", err)
		return nil, fmt.Errorf("proxmoxve: %w: %w", err, ErrNoConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("proxmoxve: %w", err)
	}
	data, err := withDrive(p.env, dev, nil, func(dir string) ([]byte, error) {
		for _, name := range proxmoxFiles {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s on %s: %w", name, dev, err)
			}
			if why := notIgnition(data); why != "" {
				log.Info("skipping cidata file", "file", name, "reason", why)
				continue
			}
			log.Info("read config from the cidata drive", "file", name, "bytes", len(data))
			return data, nil
		}
		return nil, ErrNoConfig
	})
	if errors.Is(err, ErrNoConfig) {
		log.Info("no Ignition config on the cidata drive: booting with an empty config")
		return nil, fmt.Errorf("proxmoxve: no Ignition config in %v on %s: %w", proxmoxFiles, dev, err)
	}
	if err != nil {
		return nil, fmt.Errorf("proxmoxve: %w", err)
	}
	return data, nil
}

// notIgnition says why a cidata file is not the config, or "" when it
// is. As Ignition (coreos/ignition internal/providers/proxmoxve/
// proxmoxve.go, fetchConfigFromDevice), only an empty file and Proxmox's
// own #cloud-config (its first line; a byte-order mark or a CRLF line end
// tolerated) are skipped. Anything else is the config: a script or a
// Butane YAML put there by mistake reaches the parser, which fails the
// boot with its error, rather than the machine booting without its config.
func notIgnition(data []byte) string {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	switch {
	case len(data) == 0:
		return "empty"
	case string(bytes.TrimSuffix(first, []byte("\r"))) == "#cloud-config":
		return "cloud-init #cloud-config"
	}
	return ""
}

// proxmoxVEKargsWait bounds the wait for the cidata drive's device: the
// kernel has it before udev runs, when the unit runs, unless its driver
// is still probing.
const proxmoxVEKargsWait = 5 * time.Second

// NetworkKargs returns Proxmox VE's initramfs network arguments, as
// Afterburn's rd_network_kargs for proxmoxve (coreos/afterburn
// src/providers/proxmoxve/cloudconfig.rs; netconfig.ProxmoxVEKargs): it
// finds the cidata drive without udev, reads its network-config and
// returns the arguments; ok is false when there is no
// drive, no network-config, or nothing in it to turn into arguments. A
// description Afterburn cannot turn into interfaces (an address that does
// not parse, more than one nameserver entry) gives no arguments: the
// distribution's default then applies.
func (p proxmoxProvider) NetworkKargs(ctx context.Context) (string, bool, error) {
	env := withSystemMounter(p.env)
	log := env.logger().With("platform", "proxmoxve")
	var dev string
	found, err := pollUntil(ctx, env.wait(proxmoxVEKargsWait), 100*time.Millisecond, func() bool {
		var ok bool
		dev, ok = findDriveInSysfs(env, cidataLabels)
		return ok
	})
	if err != nil {
		return "", false, fmt.Errorf("proxmoxve: waiting for the cidata drive: %w", err)
	}
	if !found {
		log.Info("no cidata drive among the block devices: no network arguments from it")
		return "", false, nil
	}
	data, err := withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		return readDriveData(dir, dev, ncNetConfig)
	})
	if errors.Is(err, ErrNoConfig) {
		log.Info("the cidata drive has no network-config: no network arguments from it", "device", dev)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("proxmoxve: %w", err)
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return "", false, fmt.Errorf("proxmoxve: cidata drive %s: %w: %w", ncNetConfig, ErrProtocol, err)
	}
	c, err := netconfig.Read(tree)
	kargs := ""
	if err == nil {
		kargs, err = netconfig.ProxmoxVEKargs(c)
	}
	if err != nil {
		log.Warn("network-config does not describe interfaces Afterburn reads: no network arguments from it", "error", err)
		return "", false, nil
	}
	return kargs, kargs != "", nil
}
