package providers

// Proxmox VE attaches a NoCloud drive (label cidata) built from the VM's
// cloud-init settings. /user-data is usually Proxmox's own #cloud-config;
// an Ignition config goes in a custom user-data or vendor-data snippet
// (qm set --cicustom). flint reads /user-data, then /vendor-data, and takes
// the first that can be an Ignition config.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// proxmoxDriveWait is how long Ignition waits for the cidata drive
// before it boots without a config.
const proxmoxDriveWait = 30 * time.Second

// proxmoxFiles are read in this order: user-data wins over vendor-data.
var proxmoxFiles = []string{"/user-data", "/vendor-data"}

type proxmoxProvider struct{ env Env }

// newProxmoxVE reads the user config from the cidata drive. No drive
// within 30 seconds, or no file on it that can be an Ignition config, is
// an empty config.
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

// notIgnition says why a cidata file cannot be an Ignition config, or ""
// when it may be one. Ignition skips empty files, #cloud-config
// files and anything that is not valid JSON. flint skips what cannot
// start a JSON object: empty files and cloud-init's formats (#cloud-config,
// #! scripts, #include and the other # headers, MIME multipart, gzip). A
// file that starts like JSON but is broken is returned, so the parser
// reports the mistake instead of the machine booting without its config.
func notIgnition(data []byte) string {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return "empty"
	case bytes.HasPrefix(trimmed, []byte("#cloud-config")):
		return "cloud-init #cloud-config"
	case trimmed[0] == '#':
		return "cloud-init data (# header)"
	case trimmed[0] != '{':
		return "not a JSON object"
	}
	return ""
}
