package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/engine"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages/disks"
)

// setupError is a stage that could not start (state file, fetcher): exit
// status 3, as in Ignition.
type setupError struct{ err error }

func (e setupError) Error() string { return e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

const runUsage = `usage: flint run -stage STAGE -platform ID [flags]

Runs one provisioning stage, as the distro's units do in the initramfs.
The flags and their defaults are Ignition's, so units written for it work.

flags:
  -stage STAGE              the stage to run: %s
  -platform ID              the platform (ignition.platform.id): %s
  -root DIR                 target root (default /)
  -config-cache FILE        rendered config cache (default /run/ignition.json)
  -state-file FILE          state kept between stages (default /run/ignition/state)
  -neednet FILE             flag written when the network is needed (default /run/ignition/neednet)
  -fetch-timeout DURATION   time allowed to fetch the config from its source (default 2m)
  -device-timeout DURATION  time the disks stage waits for each device the config names (default 90s)
  -fetch-idle-timeout DURATION
                            a download that sends nothing for this long is tried again, 3 times in
                            all (default flint.fetch_idle_timeout= on the kernel command line, else 30s)
  -firstboot-stamp FILE     the "first boot in progress" stamp, on storage that outlives the boot:
                            written before the disks stage, removed when files succeeds; a boot
                            that finds an earlier boot's stops (flint.firstboot.retry=1 goes on)
  -firstboot-stamp-device DEV
                            the filesystem the stamp is on, mounted at the stamp's directory only
                            to read or write it; absent, or wiped by the config: no stamp
  -log-to-stdout            log to standard output instead of the journal
  -authorized-keys-fragment write the config's SSH keys to ~/.ssh/authorized_keys.d/ignition
                            (true) or merge them into ~/.ssh/authorized_keys (false); default
                            $IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT, else the build's (%s)
`

func runUsageText() string {
	return fmt.Sprintf(runUsage, strings.Join(engine.Stages(), ", "), strings.Join(platform.IDs(), ", "), authorizedKeysFragment)
}

// authorizedKeysFragment is the build's default for where the files stage
// writes the config's SSH keys: "true" the fragment
// ~/.ssh/authorized_keys.d/ignition, "false" merged into
// ~/.ssh/authorized_keys, for a distro whose sshd reads no
// authorized_keys.d. A distro sets it with
// -ldflags "-X main.authorizedKeysFragment=false" (make
// AUTHORIZED_KEYS_FRAGMENT=false), as Ignition's
// writeAuthorizedKeysFragment (internal/distro/distro.go).
var authorizedKeysFragment = "true"

// envAuthorizedKeysFragment overrides the build's default at run time,
// under Ignition's name for it.
const envAuthorizedKeysFragment = "IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT"

// parseBool reads the booleans of build settings and the environment: the
// linker sets only strings, and Ignition accepts these four.
func parseBool(s string) (bool, bool) {
	switch s {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// fragmentDefault is -authorized-keys-fragment's default: the environment's
// value when set, else the build's (authorizedKeysFragment).
func fragmentDefault(build string, getenv func(string) string) (bool, error) {
	if v := getenv(envAuthorizedKeysFragment); v != "" {
		b, ok := parseBool(v)
		if !ok {
			return false, fmt.Errorf("$%s=%q: want true, false, 1 or 0", envAuthorizedKeysFragment, v)
		}
		return b, nil
	}
	b, ok := parseBool(build)
	if !ok {
		return false, fmt.Errorf("this build's main.authorizedKeysFragment=%q: want true, false, 1 or 0 (a packaging mistake)", build)
	}
	return b, nil
}

// logDelay is the longest a line logged to standard output waits to be
// written.
const logDelay = 50 * time.Millisecond

// A stage is a short process whose heap is mostly the config: collecting
// at five times the live heap instead of twice spares the collector's
// work (20-30 ms of the fetch and files stages together on a config of
// 5,000 files) for memory the machine has at that point, and the soft
// limit makes the collector work harder rather than let a huge config
// take more. The fetch stages replace the limit with memoryBudget of the
// configs they read, once they know their size. GOGC and GOMEMLIMIT in
// the environment win.
const (
	stageGCPercent   = 400
	stageMemoryLimit = 256 << 20
)

// tuneGC sets the stage's garbage collector targets, except those the
// environment (getenv) sets.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(stageGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(stageMemoryLimit)
	}
}

// runOptions are flint run's options.
type runOptions struct {
	stage, platform, root, cache, state, neednet string
	fetchTimeout, deviceTimeout, idleTimeout     time.Duration
	toStdout, fragment                           bool
	stampFile, stampDevice                       string
}

// runFlags declares flint run's options, -authorized-keys-fragment's
// default being fragment; its man page and completions are made from the
// same FlagSet (gen.go). The flags and defaults are Ignition's.
func runFlags(fragment bool) (*flag.FlagSet, *runOptions) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.stage, "stage", "", "the `STAGE` to run")
	fs.StringVar(&o.platform, "platform", "", "the platform `ID` (ignition.platform.id), see docs/providers.md")
	fs.StringVar(&o.root, "root", engine.DefaultRoot, "the target root `DIR`")
	fs.StringVar(&o.cache, "config-cache", engine.DefaultConfigCache, "the rendered config's cache `FILE`")
	fs.StringVar(&o.state, "state-file", engine.DefaultStateFile, "the `FILE` of the state kept between stages")
	fs.StringVar(&o.neednet, "neednet", engine.DefaultNeedNet, "the `FILE` written when the network is needed")
	fs.DurationVar(&o.fetchTimeout, "fetch-timeout", engine.DefaultFetchTimeout, "the `DURATION` allowed to fetch the config from its source")
	fs.DurationVar(&o.deviceTimeout, "device-timeout", disks.DefaultDeviceTimeout, "the `DURATION` the disks stage waits for each device the config names")
	fs.DurationVar(&o.idleTimeout, "fetch-idle-timeout", 0, "a download that sends nothing for this `DURATION` is tried again, 3 times in all (0: flint.fetch_idle_timeout= on the kernel command line, else 30s)")
	fs.BoolVar(&o.toStdout, "log-to-stdout", false, "log to standard output instead of the journal")
	fs.StringVar(&o.stampFile, "firstboot-stamp", "", "the first-boot stamp `FILE`, on storage that outlives a reboot: written before the disks stage, removed when files succeeds; a boot that finds it stops (docs/operator-notes.md)")
	fs.StringVar(&o.stampDevice, "firstboot-stamp-device", "", "the `DEVICE` of the filesystem the stamp is on, mounted at the stamp's directory only to read or write it; absent, or wiped or remade by the config, means no stamp")
	fs.BoolVar(&o.fragment, "authorized-keys-fragment", fragment, "write the config's SSH keys to ~/.ssh/authorized_keys.d/ignition (true) or merge them into ~/.ssh/authorized_keys (false); the default is $IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT, else the build's")
	return fs, &o
}

// runStage parses `flint run` flags and runs the stage with the engine.
func runStage(ctx context.Context, args []string, stdout io.Writer) error {
	return runStageAs(ctx, args, stdout, oplog.Identifier)
}

// runStageAs is runStage with the journal entries' SYSLOG_IDENTIFIER:
// under Ignition's name, Ignition's ("ignition", which it logs with
// through syslog, coreos/ignition internal/log/log.go), so that a
// distro's `journalctl -t ignition` finds them.
func runStageAs(ctx context.Context, args []string, stdout io.Writer, ident string) error {
	fragment, err := fragmentDefault(authorizedKeysFragment, os.Getenv)
	if err != nil {
		return setupError{err}
	}
	fs, o := runFlags(fragment)
	stage, platformID, root, cache, state, neednet := &o.stage, &o.platform, &o.root, &o.cache, &o.state, &o.neednet
	fetchTimeout, deviceTimeout, idleTimeout, toStdout := &o.fetchTimeout, &o.deviceTimeout, &o.idleTimeout, &o.toStdout
	stampFile := &o.stampFile
	usage := func(format string, a ...any) error {
		return usageError{"run: " + fmt.Sprintf(format, a...) + "\n\n" + runUsageText()}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runUsageText())
			return nil
		}
		return usage("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case *stage == "":
		return usage("-stage is required")
	case !slices.Contains(engine.Stages(), *stage):
		return usage("unknown stage %q (known stages: %s)", *stage, strings.Join(engine.Stages(), ", "))
	case *platformID == "":
		return usage("-platform is required")
	case *fetchTimeout < 0:
		return usage("-fetch-timeout must not be negative")
	case *deviceTimeout <= 0:
		return usage("-device-timeout must be positive")
	case *idleTimeout < 0:
		return usage("-fetch-idle-timeout must not be negative")
	}
	p, ok := platform.Lookup(*platformID)
	if !ok {
		return usage("unknown platform %q (known platforms: %s)", *platformID, strings.Join(platform.IDs(), ", "))
	}

	tuneGC(os.Getenv)
	var handler slog.Handler
	journal := !*toStdout && oplog.JournalAvailable()
	if journal {
		handler = oplog.NewJournalHandler(nil)
	} else {
		// Lines are gathered for at most logDelay: one write per
		// line cost a tenth of the files stage's time on thousands
		// of files.
		out := oplog.NewDelayedWriter(stdout, logDelay)
		defer out.Flush()
		handler = oplog.NewTextHandler(out, slog.LevelInfo)
	}
	logger := slog.New(handler)
	if journal && ident != oplog.Identifier {
		logger = logger.With("SYSLOG_IDENTIFIER", ident)
	}
	if !*toStdout && !journal {
		logger.Info("the journal is not available: logging to standard output")
	}

	err = engine.Run(ctx, engine.Options{
		Stage:         *stage,
		Platform:      p,
		Root:          *root,
		ConfigCache:   *cache,
		StateFile:     *state,
		NeedNet:       *neednet,
		FetchTimeout:  *fetchTimeout,
		DeviceTimeout: *deviceTimeout,
		// 0: the kernel argument, else the fetcher's default.
		FetchIdleTimeout: *idleTimeout,
		Logger:           logger,
		Version:          version,
		Getenv:           os.Getenv,
		StampFile:        *stampFile,
		StampDevice:      o.stampDevice,

		AuthorizedKeysFile: !o.fragment,
		// The fetch stages' memory is bounded by the configs they read:
		// the limit follows them, within memoryBudget.
		ConfigSize: func(total int64) { limitMemory(os.Getenv, total) },
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrUnknownStage):
		return usage("%v", err)
	case errors.Is(err, engine.ErrSetup):
		return setupError{err}
	}
	return err
}
