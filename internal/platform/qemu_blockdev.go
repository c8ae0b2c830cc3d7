package platform

// On s390x and ppc64le QEMU has no fw_cfg; the config comes as the raw
// contents of a virtio disk with the serial "ignition"
// (-drive if=none,id=ign,file=config.ign,format=raw,readonly=on
// -device virtio-blk,serial=ignition,drive=ign), which udev links as
// /dev/disk/by-id/virtio-ignition. The disk is padded with NULs to its
// block size.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

const (
	qemuBlockDevice = "/dev/disk/by-id/virtio-ignition"
	// qemuBlockDeviceWait and qemuBlockDevicePoll are Ignition's.
	qemuBlockDeviceWait = 5 * time.Minute
	qemuBlockDevicePoll = 5 * time.Second
)

type qemuBlockDev struct{ env Env }

// newQEMUBlockDevice reads the config from the virtio-ignition disk,
// waiting up to five minutes for it. A disk that never appears is an
// error: the machine was started for this channel.
func newQEMUBlockDevice(env Env) Provider { return qemuBlockDev{env: env} }

func (p qemuBlockDev) FetchConfig(ctx context.Context) ([]byte, error) {
	log := p.env.logger().With("platform", "qemu", "op", "virtio-ignition")
	log.Warn("fetching the config from the virtio-ignition block device is experimental, as in Ignition")
	// As Ignition: modprobe only when the driver is not there yet, so a
	// driver built into a kernel whose initramfs lacks modules.builtin (or
	// modprobe) is no failure.
	if _, err := os.Stat(p.env.path("/sys/bus/virtio/drivers/virtio_blk")); err != nil && p.env.Runner != nil {
		if _, err := p.env.Runner.Run(ctx, "modprobe", "virtio_blk"); err != nil {
			return nil, fmt.Errorf("qemu: loading the virtio block driver: %w", err)
		}
	}

	dev := p.env.path(qemuBlockDevice)
	wait := p.env.wait(qemuBlockDeviceWait)
	var (
		data    []byte
		readErr error
	)
	read := func() bool {
		data, readErr = os.ReadFile(dev)
		if errors.Is(readErr, fs.ErrNotExist) {
			return false
		}
		return true
	}
	if _, err := os.Stat(dev); err != nil {
		log.Info("waiting for the config block device", "device", qemuBlockDevice, "timeout", wait)
	}
	ok, err := pollUntil(ctx, wait, qemuBlockDevicePoll, read)
	if err != nil {
		return nil, fmt.Errorf("qemu: waiting for %s: %w", qemuBlockDevice, err)
	}
	if !ok {
		return nil, fmt.Errorf("qemu: %s did not appear within %v: %w", qemuBlockDevice, wait, errNoDrive)
	}
	if readErr != nil {
		return nil, fmt.Errorf("qemu: reading %s: %w", qemuBlockDevice, readErr)
	}
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		log.Info("config block device is empty: booting with an empty config")
		return nil, fmt.Errorf("qemu: %s is empty: %w", qemuBlockDevice, ErrNoConfig)
	}
	log.Info("read config from the block device", "bytes", len(data))
	return data, nil
}
