package platform

// QEMU hands the config to the guest through the firmware configuration
// device (fw_cfg), as the blob `opt/com.coreos/config`:
//
//	qemu-system-x86_64 -fw_cfg name=opt/com.coreos/config,file=config.ign
//
// The qemu_fw_cfg driver shows every blob under
// /sys/firmware/qemu_fw_cfg/by_name/<name>/ with a `raw` file (the
// contents) and a `size` file (the length in bytes, in decimal). s390x and
// ppc64le have no fw_cfg; there the config comes on a virtio disk with the
// serial `ignition` (qemu_blockdev.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

const (
	fwCfgDir = "/sys/firmware/qemu_fw_cfg"
	// fwCfgConfigDir is the blob opt/com.coreos/config.
	fwCfgConfigDir = fwCfgDir + "/by_name/opt/com.coreos/config"
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

	sizeText, err := os.ReadFile(sizePath)
	if errors.Is(err, fs.ErrNotExist) {
		log.Info("no fw_cfg blob opt/com.coreos/config: booting with an empty config")
		return nil, fmt.Errorf("qemu: no fw_cfg blob opt/com.coreos/config: %w", ErrNoConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("qemu: fw_cfg size: %w", err)
	}
	size, err := strconv.ParseInt(strings.TrimSpace(string(sizeText)), 10, 64)
	// fw_cfg sizes are 32-bit (struct fw_cfg_file in QEMU's fw_cfg.h).
	if err != nil || size < 0 || size > math.MaxUint32 {
		return nil, fmt.Errorf("qemu: fw_cfg size %q in %s is not a byte count", strings.TrimSpace(string(sizeText)), sizePath)
	}
	if size == 0 {
		log.Info("fw_cfg blob opt/com.coreos/config is empty: booting with an empty config")
		return nil, fmt.Errorf("qemu: fw_cfg blob opt/com.coreos/config is empty: %w", ErrNoConfig)
	}

	f, err := os.Open(p.env.path(fwCfgConfigDir + "/raw"))
	if err != nil {
		return nil, fmt.Errorf("qemu: fw_cfg blob: %w", err)
	}
	defer f.Close()
	data, err := readSized(ctx, f, size, log, p.slowAfter, p.progress)
	if err != nil {
		return nil, fmt.Errorf("qemu: fw_cfg blob opt/com.coreos/config: %w", err)
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
	if _, serr := os.Stat(p.env.path(fwCfgDir)); serr == nil {
		log.Warn("modprobe qemu_fw_cfg failed, but the driver is present", "error", err)
		return nil
	}
	return fmt.Errorf("qemu: loading the fw_cfg driver: %w", err)
}

// readSized reads exactly size bytes from r in as few read(2) calls as it
// can (one buffer of the whole size: each call on the fw_cfg raw file
// costs time proportional to its offset). More data than size, or less,
// is an error. Past slowAfter it warns, then logs progress every
// progressEvery.
func readSized(ctx context.Context, r io.Reader, size int64, log *slog.Logger, slowAfter, progressEvery time.Duration) ([]byte, error) {
	// One guard byte past size tells a blob longer than announced.
	buf := make([]byte, size+1)
	var n int64
	start := time.Now()
	slow := false
	lastReport := start
	for n < size {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := r.Read(buf[n:])
		n += int64(m)
		if errors.Is(err, io.EOF) {
			if n < size {
				return nil, fmt.Errorf("truncated: %d of %d bytes", n, size)
			}
			break
		}
		if err != nil {
			return nil, err
		}
		now := time.Now()
		if !slow && now.Sub(start) >= slowAfter {
			slow = true
			log.Warn("reading the config from fw_cfg is slow (its driver takes quadratic time); move large files to a URL the config references")
		}
		if slow && (now.Sub(lastReport) >= progressEvery || n >= size) {
			log.Info("reading config from fw_cfg", "read_kib", n/1024, "size_kib", size/1024)
			lastReport = now
		}
	}
	if n > size {
		return nil, fmt.Errorf("longer than its size file says (%d bytes)", size)
	}
	// When size ends on a page boundary the guard byte is not read: one
	// more read(2) would be the most expensive of all, and the size file
	// is the driver's own account of the blob.
	return buf[:size], nil
}
