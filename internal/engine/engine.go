// Package engine runs one flint stage per process, the way the distro's
// units call it. The stages are one ordered table in this package
// (stageList: {name, stage}), not registrations spread over init
// functions; each implements stages.Stage. The engine owns only what every
// stage shares: reading the kernel command line once, making the fetcher,
// loading and saving the state file, logging and timing the stage, the
// "stage <name>:" error prefix, and the first-boot stamp (stamp.go) that
// stops a boot after one that died half-way. What a stage does, down to
// the config it runs with (stages/fetch gets it, and reads it back from
// the cache for the later stages) and the flags it leaves, is in its own
// package.
//
// Family: boot stages (internal/README.md).
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/escape"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/disks"
	"github.com/flintboot/flint/internal/stages/fetch"
	"github.com/flintboot/flint/internal/stages/files"
	"github.com/flintboot/flint/internal/stages/kargs"
	"github.com/flintboot/flint/internal/stages/mount"
	"github.com/flintboot/flint/internal/stages/umount"
	"github.com/flintboot/flint/internal/sys"
)

// Ignition's defaults (coreos/ignition internal/main.go), so distro units
// written for it work unchanged.
const (
	DefaultRoot         = "/"
	DefaultConfigCache  = "/run/ignition.json"
	DefaultStateFile    = "/run/ignition/state"
	DefaultNeedNet      = "/run/ignition/neednet"
	DefaultFetchTimeout = 2 * time.Minute
)

// FetchedConfigMessageID is the journal MESSAGE_ID of the "config fetched"
// entries (fetch.FetchedConfigMessageID).
const FetchedConfigMessageID = fetch.FetchedConfigMessageID

// StageFailedMessageID is the journal MESSAGE_ID of the line that says a
// stage failed and why (flint's own; Ignition has none), so a console
// helper can show the reason without parsing text:
// journalctl MESSAGE_ID=22e4122142524666b1688f12057c3755.
const StageFailedMessageID = "22e4122142524666b1688f12057c3755"

// Fetcher is what the stages need of *resource.Fetcher.
type Fetcher = stages.Fetcher

// Options say which stage to run, and how.
type Options struct {
	Stage string
	// Platform is the ignition.platform.id's row of the platform table
	// (platform.Lookup); the fetch stages ask its provider last.
	Platform platform.Platform
	// Root is the target root the later stages write under ("" means /).
	Root string
	// ConfigCache, StateFile and NeedNet are Ignition's files (""
	// means the defaults above).
	ConfigCache string
	StateFile   string
	NeedNet     string
	// FetchTimeout bounds the fetch of the user config from its source,
	// retries included (0: no bound); the config's own timeouts apply
	// after that.
	FetchTimeout time.Duration
	// DeviceTimeout bounds the disks stage's wait for each device the
	// config names, and the kargs stage's for the boot filesystem (0:
	// disks.DefaultDeviceTimeout).
	DeviceTimeout time.Duration
	// FetchIdleTimeout ends an attempt at a download that sends nothing
	// for that long (resource.Options.IdleTimeout); 0 means the kernel
	// command line's flint.fetch_idle_timeout, else
	// resource.DefaultIdleTimeout.
	FetchIdleTimeout time.Duration
	// Logger receives every line; nil discards them.
	Logger *slog.Logger
	// Version is flint's, for the first log line and the User-Agent.
	Version string
	// Getenv reads the environment variables that move well-known paths
	// (IGNITION_KERNEL_CMDLINE_PATH, IGNITION_SYSTEM_*_CONFIG_DIR) and
	// the kargs stage's (kargs.EnvHelper, kargs.EnvBootDevice); nil means
	// none is set.
	Getenv func(string) string
	// ConfigDirs replaces the system config directories; the zero value
	// means the defaults, each moved by its environment variable.
	ConfigDirs platform.ConfigDirs
	// CmdlinePath replaces /proc/cmdline; "" means
	// $IGNITION_KERNEL_CMDLINE_PATH, or /proc/cmdline under
	// ProviderEnv.Root.
	CmdlinePath string
	// ReadCmdline reads the kernel command line, once per run; nil
	// reads CmdlinePath (platform.ReadCmdline).
	ReadCmdline func() (platform.Cmdline, error)
	// ProviderEnv is the base of the sources' environment: tests set its
	// Root, Endpoint and Wait. The fetch stages fill what is nil: Getter
	// and Fetcher with the stage's fetcher, Mounter and Runner with
	// package sys's, Logger with the stage's (fetch.AcquireDeps.Env).
	ProviderEnv platform.Env
	// NewFetcher makes the stage's fetcher (offline for fetch-offline);
	// nil means resource.New.
	NewFetcher func(log *slog.Logger, offline bool) (Fetcher, error)
	// AuthorizedKeysFile makes the files stage merge the config's SSH
	// keys into ~/.ssh/authorized_keys instead of writing the fragment
	// ~/.ssh/authorized_keys.d/ignition (files.Deps.AuthorizedKeysFile).
	AuthorizedKeysFile bool
	// Apply runs the stages for `flint apply`, on a root that is not
	// booting: the files stage writes no result file and no manifest
	// (files.Deps.NoResult), so the root gets only what the plan lists.
	Apply bool
	// StampFile is the "first boot in progress" stamp, on storage that
	// outlives the boot ("" means none): written before the disks, mount
	// and files stages (naming the stage), removed when files succeeds.
	// A stage that finds one an earlier boot wrote fails with
	// ErrInterrupted, unless KargFirstbootRetry=1 is on the kernel
	// command line.
	StampFile string
	// StampDevice, when set, is the block device of the filesystem the
	// stamp is kept on (the dracut module's /dev/disk/by-label/boot):
	// the directory of StampFile is its mountpoint, and the engine
	// mounts it around each read (read-only) and write (read-write) of
	// the stamp, never while a stage runs. No such device, or a config
	// whose disks stage would wipe or remake it, means no stamp
	// (stampfs.go).
	StampDevice string
	// StampMounter mounts StampDevice; nil calls mount(2) and umount(2).
	StampMounter StampMounter
	// BootID reads this boot's id, for the stamp; nil reads
	// /proc/sys/kernel/random/boot_id.
	BootID func() (string, error)
	// MaxConfigSize is the largest config (user, referenced or base) the
	// stage reads, in bytes; 0 means the kernel argument
	// flint.config.max_size (fetch.ArgMaxConfigSize), else
	// config.DefaultMaxSize.
	MaxConfigSize int64
	// ConfigSize, when not nil, is called in the fetch stages before each
	// config is parsed, with the size of all the configs read so far:
	// what the stage needs in memory grows with it (cmd/flint sets the
	// runtime's memory limit from it).
	ConfigSize func(total int64)
}

// row is one row of the stage list.
type row struct {
	name string
	// offline: the stage gets an offline fetcher and stages.Env.Offline.
	offline bool
	stage   stages.Stage
}

// stageList returns the stages in boot order: fetch-offline, fetch, kargs,
// disks, mount, files, umount, each with its options from o.
func stageList(o Options) []row {
	src := sources(o)
	return []row{
		{name: "fetch-offline", offline: true, stage: fetch.Stage{Options: src}},
		{name: "fetch", stage: fetch.Stage{Options: src}},
		{name: "kargs", stage: fetch.FromCache(src, kargs.Stage{Getenv: o.Getenv, DeviceTimeout: o.DeviceTimeout})},
		{name: "disks", stage: fetch.FromCache(src, disks.Stage{DeviceTimeout: o.DeviceTimeout})},
		{name: "mount", stage: fetch.FromCache(src, mount.Stage{})},
		{name: "files", stage: fetch.FromCache(src, files.Stage{AuthorizedKeysFile: o.AuthorizedKeysFile, NoResult: o.Apply})},
		{name: "umount", stage: fetch.FromCache(src, umount.Stage{})},
	}
}

// sources returns where the configs are, for the fetch stages and the
// cache reader.
func sources(o Options) fetch.Options {
	return fetch.Options{
		Platform:      o.Platform,
		ConfigDirs:    o.ConfigDirs,
		ProviderEnv:   o.ProviderEnv,
		FetchTimeout:  o.FetchTimeout,
		MaxConfigSize: o.MaxConfigSize,
		OnSize:        o.ConfigSize,
	}
}

// Stages returns the names of the stages, in boot order.
func Stages() []string {
	var names []string
	for _, s := range stageList(Options{}) {
		names = append(names, s.name)
	}
	return names
}

// Run runs one stage. Its error starts with "stage <name>:" and wraps
// ErrUnknownStage for a stage name not in the list, ErrSetup when the
// stage could not get ready (the state file, the fetcher), and otherwise
// says why the stage failed.
func Run(ctx context.Context, o Options) error {
	return run(ctx, o, stageList)
}

// run is Run with the stage list as a parameter, for tests.
func run(ctx context.Context, o Options, list func(Options) []row) error {
	o = o.withDefaults()
	rows := list(o)
	var st row
	found := false
	for _, s := range rows {
		if s.name == o.Stage {
			st, found = s, true
		}
	}
	if !found {
		var names []string
		for _, s := range rows {
			names = append(names, s.name)
		}
		return fmt.Errorf("stage %s: %w (known stages: %s)", o.Stage, ErrUnknownStage, strings.Join(names, ", "))
	}
	log := o.Logger.With(oplog.StageKey, st.name)
	log.Info("flint "+o.Version+" running stage "+st.name, "platform", o.Platform.ID, "root", o.Root)
	start := time.Now()
	err := runStage(ctx, o, st, start, log)
	if err != nil {
		recordStage(o.StateFile, st.name, start, err, log)
		log.Log(ctx, oplog.LevelCritical, "stage failed", "duration", time.Since(start).Round(time.Millisecond), "error", err,
			"MESSAGE_ID", StageFailedMessageID)
		return fmt.Errorf("stage %s: %w", st.name, err)
	}
	log.Info("stage finished", "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// stageRecord is how the stage that started at start ended
// (stages.Record), for the first-boot report `flint report` sends at the
// end.
func stageRecord(name string, start time.Time, stageErr error) stages.Record {
	rec := stages.Record{Name: name, Start: start.UTC(), Duration: time.Since(start).Milliseconds(), Outcome: "success"}
	if stageErr != nil {
		// The text of the stage-failed line's error, as the console
		// shows it.
		rec.Outcome, rec.Error = "failure", escape.Line(stageErr.Error())
	}
	return rec
}

// recordStage records a failed stage in the state file, when the rest of
// what the stage changed is not saved; a stage that succeeds has its
// record saved with its state, in the one write of the state file
// (runStage). The record replaces the stage's own success record when
// the stage failed after its state was saved (the stamp's removal). A
// record that cannot be written is logged, and fails nothing.
func recordStage(path, name string, start time.Time, stageErr error, log *slog.Logger) {
	rec := stageRecord(name, start, stageErr)
	state, err := loadState(path)
	if err == nil {
		if n := len(state.Stages); n > 0 && state.Stages[n-1].Name == name && state.Stages[n-1].Start.Equal(rec.Start) {
			state.Stages = state.Stages[:n-1]
		}
		state.Stages = append(state.Stages, rec)
		err = saveState(path, state)
	}
	if err != nil {
		log.Warn("could not record the stage's outcome for the report", "error", err)
	}
}

func (o Options) withDefaults() Options {
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	if o.ConfigCache == "" {
		o.ConfigCache = DefaultConfigCache
	}
	if o.StateFile == "" {
		o.StateFile = DefaultStateFile
	}
	if o.NeedNet == "" {
		o.NeedNet = DefaultNeedNet
	}
	if o.DeviceTimeout == 0 {
		o.DeviceTimeout = disks.DefaultDeviceTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BootID == nil {
		o.BootID = readBootID
	}
	if o.StampMounter == nil {
		o.StampMounter = kernelMounter{}
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.ConfigDirs == (platform.ConfigDirs{}) {
		o.ConfigDirs = platform.ConfigDirsFromEnv(o.Getenv)
	}
	if o.CmdlinePath == "" {
		o.CmdlinePath = o.Getenv(platform.EnvCmdlinePath)
	}
	if o.ReadCmdline == nil {
		env, path := o.ProviderEnv, o.CmdlinePath
		o.ReadCmdline = func() (platform.Cmdline, error) { return platform.ReadCmdline(env, path) }
	}
	return o
}

// runStage gets the stage's environment ready, runs the stage, and saves
// the state it leaves with the stage's record (started at start), in one
// write of the state file.
func runStage(ctx context.Context, o Options, st row, start time.Time, log *slog.Logger) error {
	state, err := loadState(o.StateFile)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	// Read once: every stage and source that needs the command line
	// gets this copy.
	var cmdline stages.Cmdline
	cmdline.Args, cmdline.Err = o.ReadCmdline()
	initramfs := inInitramfs()
	comingUp := initramfs && exists(o.NeedNet)
	newFetcher := o.NewFetcher
	if newFetcher == nil {
		newFetcher = defaultFetcher(o, cmdline, comingUp)
	}
	fetcher, err := newFetcher(log.With(oplog.OpKey, "fetch"), st.offline)
	if err != nil {
		return fmt.Errorf("%w: creating the fetcher: %w", ErrSetup, err)
	}
	e := &stages.Env{
		Logger:          log,
		Root:            o.Root,
		Fetcher:         fetcher,
		Runner:          sys.Runner{Logger: log.With(oplog.OpKey, "command")},
		State:           &state,
		Cmdline:         cmdline,
		Files:           stages.Files{ConfigCache: o.ConfigCache, StateFile: o.StateFile, NeedNet: o.NeedNet},
		Offline:         st.offline,
		Initramfs:       initramfs,
		NetworkComingUp: comingUp,
	}
	stamped := o.StampFile != "" && slices.Contains(stampStages, st.name)
	useStamp := o.StampFile != ""
	if useStamp && o.StampDevice != "" {
		o.StampDevice, useStamp, e.Cache = stampDeviceUsable(o, st.name, stamped, log)
		stamped = stamped && useStamp
	}
	if useStamp {
		bootID, err := o.BootID()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		err = withStampFS(ctx, o, stamped, func() error {
			if err := checkStamp(o, cmdline, &state, log); err != nil {
				return err
			}
			if stamped {
				if err := writeStamp(o, st.name, bootID); err != nil {
					return err
				}
				state.FirstbootStamped = true
			}
			return nil
		})
		if errors.Is(err, errNoStampFS) {
			log.Info("running without the first-boot stamp", "error", err)
			stamped = false
		} else if err != nil {
			return err
		}
	}
	if err := st.stage.Run(ctx, e); err != nil {
		if e.Config.Ignition.Version != "" {
			if b, rerr := config.RenderRedacted(e.Config); rerr == nil {
				log.Debug("the config the stage ran with, secrets redacted", "config", string(b))
			}
		}
		return err
	}
	state.Stages = append(state.Stages, stageRecord(st.name, start, nil))
	if err := saveState(o.StateFile, state); err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	if stamped && st.name == "files" {
		return withStampFS(ctx, o, true, func() error { return removeStamp(o) })
	}
	return nil
}
