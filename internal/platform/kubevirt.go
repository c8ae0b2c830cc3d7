package platform

// KubeVirt passes user-data on a disk the VM spec declares: a NoCloud
// volume (label cidata, /user-data) or a ConfigDrive volume (label
// config-2, OpenStack layout). A VM has one or the other, and may get it
// late, so flint waits for both and takes whichever appears first.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flintboot/flint/internal/netconfig"
)

type kubevirtProvider struct{ env Env }

// newKubeVirt reads the user config from a cidata or config-2 drive,
// waiting for one as long as the fetch may take (Ignition has no
// timeout). A drive without user-data is an empty config.
func newKubeVirt(env Env) Provider { return kubevirtProvider{env: env} }

func (p kubevirtProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	drive := func(label, relPath string) raceSource {
		return raceSource{
			name: fmt.Sprintf("config drive %s", label),
			fetch: func(ctx context.Context) ([]byte, error) {
				data, err := readDriveFile(ctx, p.env, []string{label}, relPath, p.env.wait(0))
				if err != nil {
					return nil, fmt.Errorf("kubevirt: %w", err)
				}
				return data, nil
			},
		}
	}
	return raceUserData(ctx, p.env, "kubevirt", []raceSource{
		drive("cidata", "/user-data"),
		drive("config-2", "/openstack/latest/user_data"),
	})
}

// kubeVirtKargsWait bounds the wait for a config-2 or cidata drive's
// device, as proxmoxVEKargsWait.
const kubeVirtKargsWait = 5 * time.Second

// NetworkKargs returns KubeVirt's initramfs network arguments, as
// Afterburn's rd_network_kargs for kubevirt (coreos/afterburn
// src/providers/kubevirt/cloudconfig.rs; netconfig.KubeVirtKargs): it
// finds the config-2 drive, else the cidata drive, without
// udev (loading virtio_blk first when its driver is not there, as
// Afterburn does), and returns the arguments from its network
// description; ok is false with no drive or no description. A
// description that does not parse fails, as in Afterburn.
func (p kubevirtProvider) NetworkKargs(ctx context.Context) (string, bool, error) {
	env := withSystemMounter(p.env)
	log := env.logger().With("platform", "kubevirt")
	if env.Runner != nil {
		if _, err := os.Stat(env.path("/sys/bus/virtio/drivers/virtio_blk")); errors.Is(err, os.ErrNotExist) {
			if _, err := env.Runner.Run(ctx, "modprobe", "virtio_blk"); err != nil {
				log.Warn("modprobe virtio_blk failed", "error", err)
			}
		}
	}
	var dev, file string
	found, err := pollUntil(ctx, env.wait(kubeVirtKargsWait), 100*time.Millisecond, func() bool {
		var ok bool
		if dev, ok = findDriveInSysfs(env, configDriveLabels); ok {
			file = "/openstack/latest/network_data.json"
		} else if dev, ok = findDriveInSysfs(env, cidataLabels); ok {
			file = ncNetConfig
		}
		return ok
	})
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: waiting for a config drive: %w", err)
	}
	if !found {
		log.Info("no config-2 nor cidata drive among the block devices: no network arguments from it")
		return "", false, nil
	}
	data, err := withDrive(env, dev, nil, func(dir string) ([]byte, error) {
		return readDriveData(dir, dev, file)
	})
	if errors.Is(err, ErrNoConfig) {
		log.Info("the drive has no network description: no network arguments from it", "device", dev, "file", file)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: %w", err)
	}
	tree, err := readYAMLTree(data)
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: %s on %s: %w: %w", file, filepath.Base(dev), ErrProtocol, err)
	}
	c, err := netconfig.Read(tree)
	if err != nil {
		return "", false, fmt.Errorf("kubevirt: %s on %s: %w: %w", file, filepath.Base(dev), ErrProtocol, err)
	}
	kargs := netconfig.KubeVirtKargs(c)
	return kargs, kargs != "", nil
}
