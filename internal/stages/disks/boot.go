package disks

import (
	"context"
	"os"
	"time"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
)

// Stage is the disks stage as the engine runs it.
type Stage struct {
	// DeviceTimeout bounds the wait for each device the config names (0:
	// DefaultDeviceTimeout).
	DeviceTimeout time.Duration
}

// Run runs the stage (Run with Deps) on e.Config with the kernel's view
// of the devices, keeps the LUKS keys the files stage must write in the
// state, and leaves RootFormattedFlag when it made the root filesystem.
func (s Stage) Run(ctx context.Context, e *stages.Env) error {
	kernel := blockdev.Kernel{}
	udev := blockdev.UdevRunning()
	runner := e.Runner
	if !udev {
		runner.Env = append(os.Environ(), NoUdevEnv()...)
	}
	var m madeList
	var events UdevEvents
	if udev {
		events = sysUdev{}
	}
	err := Run(ctx, Deps{
		Config:        e.Config,
		Logger:        e.Logger,
		Runner:        runner,
		Devices:       kernel,
		Users:         kernel,
		Udev:          udev,
		UdevEvents:    events,
		DeviceTimeout: s.DeviceTimeout,
		Fetcher:       e.Fetcher,
		KeepKey: func(name, dataURL string) {
			if e.State.LuksPersistKeyFiles == nil {
				e.State.LuksPersistKeyFiles = map[string]string{}
			}
			e.State.LuksPersistKeyFiles[name] = dataURL
		},
		Formatted: m.add,
		// In the initramfs only: elsewhere the host loads what it
		// mounts, and a test must not load modules.
		LoadModules: e.Initramfs,
		// flint-neednet started the network without waiting for it: a
		// custom clevis pin that needs it waits.
		AwaitNetwork: e.NetworkComingUp,
		NetworkUp:    resource.NetworkUp,
	})
	if err == nil {
		markRootFormatted(e.Logger, e.Cmdline, &m, e.Files.Flag(RootFormattedFlag))
	}
	return err
}
