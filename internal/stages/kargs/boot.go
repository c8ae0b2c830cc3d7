package kargs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/stages"
)

// The stage's knobs for distributors (docs/kernel-arguments.md, "For
// distributors").
const (
	// EnvHelper names the program that applies kernel arguments instead
	// of flint's BLS editor; it gets Ignition's argv (--should-exist A …
	// --should-not-exist B …) and must reboot by itself when it changed
	// anything.
	EnvHelper = "FLINT_KARGS_HELPER"
	// DefaultHelper is used when it exists and EnvHelper is not set, so
	// a distro needs no unit change to ship a helper.
	DefaultHelper = "/usr/sbin/flint-kargs-helper"
	// EnvBootDevice names the boot filesystem's device when it is not
	// labelled "boot" (a /dev/disk/by-partlabel or by-uuid path).
	EnvBootDevice = "FLINT_KARGS_BOOT_DEVICE"
	// RebootFlag is the file, beside the state file
	// (/run/ignition/kargs-reboot), that says the stage changed the boot
	// entries and a reboot is due.
	RebootFlag = "kargs-reboot"
	// WantedFlag is the file, beside the state file
	// (/run/ignition/kargs-wanted), the fetch stages leave when the
	// config has kernel arguments (SetWanted): flint-kargs.service runs
	// only then. A stage with nothing to do is one process fewer on the
	// boot's critical path.
	WantedFlag = "kargs-wanted"
	// RebootWait bounds the stage's wait for the shutdown after it asked
	// for a reboot: a reboot that has not stopped flint by then is not
	// coming.
	RebootWait = 5 * time.Minute
)

// Stage is the kargs stage as the engine runs it.
type Stage struct {
	// Getenv reads EnvHelper and EnvBootDevice.
	Getenv func(string) string
	// DeviceTimeout bounds the wait for the boot filesystem: the boot
	// disk may not be there yet, as the disks stage's devices may not.
	DeviceTimeout time.Duration
}

// Run applies e.Config's kernel arguments (Run with Deps).
func (s Stage) Run(ctx context.Context, e *stages.Env) error {
	_, err := Run(ctx, Deps{
		Args:          e.Config.KernelArguments,
		Logger:        e.Logger,
		Runner:        e.Runner,
		Helper:        helper(s.Getenv),
		BootDevice:    s.Getenv(EnvBootDevice),
		DeviceTimeout: s.DeviceTimeout,
		RebootFlag:    e.Files.Flag(RebootFlag),
		Reboot:        initramfsReboot(e.Logger, e.Initramfs, e.Runner),
		RebootWait:    RebootWait,
	})
	return err
}

// helper returns the distro's kargs helper: $FLINT_KARGS_HELPER, or
// DefaultHelper when it exists, or "" for the built-in editor.
func helper(getenv func(string) string) string {
	if h := getenv(EnvHelper); h != "" {
		return h
	}
	if fi, err := os.Stat(DefaultHelper); err == nil && fi.Mode().IsRegular() {
		return DefaultHelper
	}
	return ""
}

// initramfsReboot returns what the stage calls after a change: in the
// initramfs, `systemctl reboot`. The later stages do not start because
// their units (dracut/30flint) conflict with shutdown.target, so the
// reboot job stops them; without that line systemd would run them during
// the shutdown. Anywhere else (a test, a chroot) nil, so that the stage
// only writes its flag.
func initramfsReboot(log *slog.Logger, initramfs bool, r Runner) func(context.Context) error {
	if !initramfs {
		log.Debug("not in the initramfs: the kargs stage will not reboot", "marker", "/etc/initrd-release")
		return nil
	}
	return func(ctx context.Context) error {
		_, err := r.Run(ctx, "systemctl", "reboot")
		return err
	}
}

// SetWanted leaves the flag file (WantedFlag, beside the state file) when
// args has kernel arguments, and removes it when it has none (a config
// fetched again after a crash is the same config, but the flag follows it
// whatever it is). The fetch stages call it once they have the config.
func SetWanted(log *slog.Logger, flag string, args config.KernelArguments) error {
	if len(args.ShouldExist) == 0 && len(args.ShouldNotExist) == 0 {
		if err := os.Remove(flag); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the kargs flag: %w", err)
		}
		return nil
	}
	log.Info("the config has kernel arguments: the kargs stage will run", "flag", flag)
	return stages.WriteFlag(flag)
}
