package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages/kargs"
)

// The kargs stage's knobs for distributors (docs/kernel-arguments.md,
// "For distributors").
const (
	// EnvKargsHelper names the program that applies kernel arguments
	// instead of flint's BLS editor; it gets Ignition's argv
	// (--should-exist A … --should-not-exist B …) and must reboot by
	// itself when it changed anything.
	EnvKargsHelper = "FLINT_KARGS_HELPER"
	// DefaultKargsHelper is used when it exists and EnvKargsHelper is not
	// set, so a distro needs no unit change to ship a helper.
	DefaultKargsHelper = "/usr/sbin/flint-kargs-helper"
	// EnvKargsBootDevice names the boot filesystem's device when it is
	// not labelled "boot" (a /dev/disk/by-partlabel or by-uuid path).
	EnvKargsBootDevice = "FLINT_KARGS_BOOT_DEVICE"
	// KargsRebootFlag is the file, beside the state file
	// (/run/ignition/kargs-reboot), that says the kargs stage changed the
	// boot entries and a reboot is due.
	KargsRebootFlag = "kargs-reboot"
	// KargsWantedFlag is the file, beside the state file
	// (/run/ignition/kargs-wanted), the fetch stages leave when the
	// config has kernel arguments: flint-kargs.service runs only then. A
	// stage with nothing to do is one process fewer on the boot's
	// critical path.
	KargsWantedFlag = "kargs-wanted"
	// KargsRebootWait bounds the kargs stage's wait for the shutdown
	// after it asked for a reboot: a reboot that has not stopped flint
	// by then is not coming.
	KargsRebootWait = 5 * time.Minute
)

// kargsHelper returns the distro's kargs helper: $FLINT_KARGS_HELPER, or
// DefaultKargsHelper when it exists, or "" for the built-in editor.
func kargsHelper(getenv func(string) string) string {
	if h := getenv(EnvKargsHelper); h != "" {
		return h
	}
	if fi, err := os.Stat(DefaultKargsHelper); err == nil && fi.Mode().IsRegular() {
		return DefaultKargsHelper
	}
	return ""
}

// initramfsReboot returns what the kargs stage calls after a change: in
// the initramfs, `systemctl reboot`. The later stages do not start because
// their units (dracut/30flint) conflict with shutdown.target, so the
// reboot job stops them; without that line systemd would run them during
// the shutdown. Anywhere else (a test, a
// chroot) nil, so that the stage only writes its flag.
func initramfsReboot(log *slog.Logger, r kargs.Runner) func(context.Context) error {
	if !inInitramfs() {
		log.Debug("not in the initramfs: the kargs stage will not reboot", "marker", initrdRelease)
		return nil
	}
	return func(ctx context.Context) error {
		_, err := r.Run(ctx, "systemctl", "reboot")
		return err
	}
}

// KargFetchIdleTimeout is the kernel argument that sets how long a
// download may send nothing before the attempt is abandoned (seconds, or
// a Go duration: flint.fetch_idle_timeout=45, =1m30s), when the unit does
// not pass -fetch-idle-timeout.
const KargFetchIdleTimeout = "flint.fetch_idle_timeout"

// idleTimeoutKarg reads KargFetchIdleTimeout from the kernel command line;
// 0 (the fetcher's default) when it is absent or not a positive
// duration, which is logged.
func idleTimeoutKarg(o Options) time.Duration {
	cmdline, err := platform.ReadCmdline(o.ProviderEnv, o.CmdlinePath)
	if err != nil {
		return 0
	}
	v, ok := cmdline.Lookup(KargFetchIdleTimeout)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if n, nerr := strconv.Atoi(v); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d <= 0 {
		o.Logger.Warn("ignoring "+KargFetchIdleTimeout+": not a positive duration", "value", v)
		return 0
	}
	return d
}

// flagKargs leaves KargsWantedFlag when the config has kernel arguments,
// and removes it when it has none (a config fetched again after a crash
// is the same config, but the flag follows it whatever it is).
func (r *stageRun) flagKargs() error {
	flag := filepath.Join(filepath.Dir(r.o.StateFile), KargsWantedFlag)
	args := r.config.KernelArguments
	if len(args.ShouldExist) == 0 && len(args.ShouldNotExist) == 0 {
		if err := os.Remove(flag); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the kargs flag: %w", err)
		}
		return nil
	}
	r.log.Info("the config has kernel arguments: the kargs stage will run", "flag", flag)
	return writeFlag(flag)
}
