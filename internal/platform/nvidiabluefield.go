package platform

// NVIDIA BlueField DPUs receive their boot payload through the boot FIFO,
// which the mlxbf_bootctl platform driver exposes in sysfs
// (drivers/platform/mellanox/mlxbf-bootctl.c). The host pushes the config
// there with the bfb-install tooling; it is padded with NULs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

const bluefieldBootFIFO = "/sys/bus/platform/devices/MLNXBF04:00/bootfifo"

type bluefieldProvider struct{ env Env }

// newNvidiaBlueField reads the config from the boot FIFO. No FIFO, or an
// empty one, is an empty config.
func newNvidiaBlueField(env Env) Provider { return bluefieldProvider{env: env} }

func (p bluefieldProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "nvidiabluefield")
	if p.env.Runner != nil {
		if _, err := p.env.Runner.Run(ctx, "modprobe", "mlxbf_bootctl"); err != nil {
			return nil, fmt.Errorf("nvidiabluefield: loading the mlxbf_bootctl driver: %w", err)
		}
	}
	raw, err := os.ReadFile(p.env.path(bluefieldBootFIFO))
	if errors.Is(err, fs.ErrNotExist) {
		log.Info("no boot FIFO: booting with an empty config", "path", bluefieldBootFIFO)
		return nil, fmt.Errorf("nvidiabluefield: no %s: %w", bluefieldBootFIFO, ErrNoConfig)
	}
	if err != nil {
		// Ignition logs this and boots with an empty config; a FIFO
		// that is there but unreadable is a fault worth stopping for.
		return nil, fmt.Errorf("nvidiabluefield: reading the boot FIFO: %w", err)
	}
	data := bytes.Trim(raw, "\x00")
	if len(data) == 0 {
		log.Info("boot FIFO is empty: booting with an empty config")
		return nil, fmt.Errorf("nvidiabluefield: %s is empty: %w", bluefieldBootFIFO, ErrNoConfig)
	}
	log.Info("read config from the boot FIFO", "bytes", len(data))
	return data, nil
}
