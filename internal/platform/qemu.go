package platform

// QEMU hands the config to the guest through the firmware configuration
// device (fw_cfg), as the blob `opt/com.coreos/config`:
//
//	qemu-system-x86_64 -fw_cfg name=opt/com.coreos/config,file=config.ign
//
// The qemu_fw_cfg driver shows it under /sys/firmware/qemu_fw_cfg (package
// guestchan/fwcfg reads it). s390x and
// ppc64le have no fw_cfg; there the config comes on a virtio disk with the
// serial `ignition` (qemu_blockdev.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/flintboot/flint/internal/guestchan/fwcfg"
)

const (
	// fwCfgConfigDir is the blob opt/com.coreos/config.
	fwCfgConfigDir = fwcfg.ByName + "/opt/com.coreos/config"
	// fwCfgSlowAfter is when reading a large blob earns a warning: the
	// driver restarts the transfer from byte 0 on every read(2), so a
	// blob of many pages takes quadratic time.
	fwCfgSlowAfter = 10 * time.Second
	// fwCfgProgressEvery is how often progress is logged once slow.
	fwCfgProgressEvery = 5 * time.Second
)

// newQEMU picks the config channel this architecture has: fw_cfg, or the
// virtio block device on s390x and ppc64le, as Ignition does.
func newQEMU(env Env) Provider {
	switch runtime.GOARCH {
	case "s390x", "ppc64le":
		return newQEMUBlockDevice(env)
	}
	return newQEMUFwCfg(env)
}

type qemuFwCfg struct {
	env       Env
	slowAfter time.Duration
	progress  time.Duration
}

// newQEMUFwCfg reads the config from the fw_cfg blob opt/com.coreos/config.
// No blob means no config: an empty config.
func newQEMUFwCfg(env Env) Provider {
	return qemuFwCfg{env: env, slowAfter: fwCfgSlowAfter, progress: fwCfgProgressEvery}
}

func (p qemuFwCfg) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "qemu", "op", "fw_cfg")
	sizePath := p.env.path(fwCfgConfigDir + "/size")
	// The blob there proves the driver loaded (udev's coldplug loads it
	// for QEMU's ACPI device, often before this stage): modprobe, a
	// process, only when it is not. Its absence proves nothing: udev may
	// be loading the driver at this very moment, and modprobe returns
	// once it has, with every blob listed.
	if _, err := os.Stat(sizePath); err != nil {
		if err := p.loadDriver(ctx, log); err != nil {
			return nil, err
		}
	}

	data, err := fwcfg.ReadBlob(ctx, p.env.path(fwCfgConfigDir), fwcfg.Progress{Logger: log, SlowAfter: p.slowAfter, Every: p.progress})
	switch {
	case errors.Is(err, fwcfg.ErrNoBlob):
		log.Info("no fw_cfg blob opt/com.coreos/config: booting with an empty config")
		return nil, fmt.Errorf("qemu: no fw_cfg blob opt/com.coreos/config: %w", ErrNoConfig)
	case err != nil:
		return nil, fmt.Errorf("qemu: fw_cfg blob opt/com.coreos/config: %w", err)
	case len(data) == 0:
		log.Info("fw_cfg blob opt/com.coreos/config is empty: booting with an empty config")
		return nil, fmt.Errorf("qemu: fw_cfg blob opt/com.coreos/config is empty: %w", ErrNoConfig)
	}
	log.Info("read config from fw_cfg", "bytes", len(data))
	return data, nil
}

// loadDriver loads qemu_fw_cfg. A failed modprobe only matters when the
// driver is not there anyway (built in, or loaded by udev already).
func (p qemuFwCfg) loadDriver(ctx context.Context, log *slog.Logger) error {
	if p.env.Runner == nil {
		return nil
	}
	_, err := p.env.Runner.Run(ctx, "modprobe", "qemu_fw_cfg")
	if err == nil {
		return nil
	}
	if _, serr := os.Stat(p.env.path(fwcfg.Dir)); serr == nil {
		log.Warn("modprobe qemu_fw_cfg failed, but the driver is present", "error", err)
		return nil
	}
	return fmt.Errorf("qemu: loading the fw_cfg driver: %w", err)
}
