// Package engine runs one flint stage per process, the way the distro's
// units call it: it loads the state file, merges the base configs under the
// user config, gets that user config (the fetch stages: from the sources,
// rendered, validated and cached; the later stages: from the cache), runs
// the stage, and saves the state. It owns what every stage shares: logging
// and timing each operation, the "stage <name>:" error prefix, the neednet
// flag, the cache and the state file.
//
// The stages are one ordered list in this package (stageList), not
// registrations spread over init functions.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages/disks"
	"github.com/flintboot/flint/internal/stages/fetch"
	"github.com/flintboot/flint/internal/stages/fetchoffline"
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

// Fetcher is what the engine needs of *resource.Fetcher.
type Fetcher interface {
	Configure(ctx context.Context, ign config.Ignition) error
	SetTotalTimeout(d time.Duration)
	SetConfigLimit(n int64)
	Fetch(ctx context.Context, res config.Resource, w io.Writer) error
	FetchConfig(ctx context.Context, res config.Resource) ([]byte, error)
	CABundle(ctx context.Context, ca config.Resource) ([]byte, error)
	Get(ctx context.Context, r resource.Request) ([]byte, error)
}

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
	// (IGNITION_KERNEL_CMDLINE_PATH, IGNITION_SYSTEM_*_CONFIG_DIR); nil
	// means none is set.
	Getenv func(string) string
	// ConfigDirs replaces the system config directories; the zero value
	// means the defaults, each moved by its environment variable.
	ConfigDirs platform.ConfigDirs
	// CmdlinePath replaces /proc/cmdline; "" means
	// $IGNITION_KERNEL_CMDLINE_PATH, or /proc/cmdline under
	// ProviderEnv.Root.
	CmdlinePath string
	// ProviderEnv is the base of the sources' environment: tests set its
	// Root, Endpoint and Wait. The engine fills what is nil: Getter and
	// Fetcher with its fetcher, Mounter and Runner with package sys's,
	// Logger with its own.
	ProviderEnv platform.Env
	// NewFetcher makes the stage's fetcher (offline for fetch-offline);
	// nil means resource.New.
	NewFetcher func(log *slog.Logger, offline bool) (Fetcher, error)
	// AuthorizedKeysFile makes the files stage merge the config's SSH
	// keys into ~/.ssh/authorized_keys instead of writing the fragment
	// ~/.ssh/authorized_keys.d/ignition (files.Deps.AuthorizedKeysFile).
	AuthorizedKeysFile bool
	// MaxConfigSize is the largest config (user, referenced or base) the
	// stage reads, in bytes; 0 means the kernel argument
	// flint.config.max_size (ArgMaxConfigSize), else
	// config.DefaultMaxSize.
	MaxConfigSize int64
	// ConfigSize, when not nil, is called in the fetch stages before each
	// config is parsed, with the size of all the configs read so far:
	// what the stage needs in memory grows with it (cmd/flint sets the
	// runtime's memory limit from it).
	ConfigSize func(total int64)
}

// ArgMaxConfigSize is the kernel argument that sets the largest config the
// stages read (Options.MaxConfigSize), in bytes or with a K, M or G suffix:
// flint.config.max_size=256M.
const ArgMaxConfigSize = "flint.config.max_size"

// acquire says how a stage gets the user config.
type acquire int

const (
	// fromCache reads the cache the fetch stages wrote.
	fromCache acquire = iota
	// fetchOffline fetches, renders and caches without the network.
	fetchOffline
	// fetchOnline does the same with the network, unless fetch-offline
	// already cached the config.
	fetchOnline
)

// stage is one row of the stage list.
type stage struct {
	name    string
	acquire acquire
	run     func(ctx context.Context, r *stageRun) error
}

// stageList returns the stages in boot order: fetch-offline, fetch, kargs,
// disks, mount, files, umount.
func stageList() []stage {
	return []stage{
		{
			name:    "fetch-offline",
			acquire: fetchOffline,
			run: func(ctx context.Context, r *stageRun) error {
				if err := r.flagKargs(); err != nil {
					return err
				}
				return fetchoffline.Run(ctx, fetchoffline.Deps{Config: r.config, Logger: r.log})
			},
		},
		{
			name:    "fetch",
			acquire: fetchOnline,
			run: func(ctx context.Context, r *stageRun) error {
				if err := r.flagKargs(); err != nil {
					return err
				}
				return fetch.Run(ctx, fetch.Deps{Logger: r.log, ConfigCache: r.o.ConfigCache})
			},
		},
		{
			name:    "kargs",
			acquire: fromCache,
			run: func(ctx context.Context, r *stageRun) error {
				runner := sys.Runner{Logger: r.log.With(oplog.OpKey, "command")}
				_, err := kargs.Run(ctx, kargs.Deps{
					Args:       r.config.KernelArguments,
					Logger:     r.log,
					Runner:     runner,
					Helper:     kargsHelper(r.o.Getenv),
					BootDevice: r.o.Getenv(EnvKargsBootDevice),
					// The boot disk may not be there yet: wait for it
					// as the disks stage waits for its devices.
					DeviceTimeout: r.o.DeviceTimeout,
					RebootFlag:    filepath.Join(filepath.Dir(r.o.StateFile), KargsRebootFlag),
					Reboot:        initramfsReboot(r.log, runner),
					RebootWait:    KargsRebootWait,
				})
				return err
			},
		},
		{
			name:    "disks",
			acquire: fromCache,
			run: func(ctx context.Context, r *stageRun) error {
				kernel := blockdev.Kernel{}
				udev := blockdev.UdevRunning()
				runner := sys.Runner{Logger: r.log.With(oplog.OpKey, "command")}
				if !udev {
					runner.Env = append(os.Environ(), disks.NoUdevEnv()...)
				}
				var m madeList
				err := disks.Run(ctx, disks.Deps{
					Config:        r.config,
					Logger:        r.log,
					Runner:        runner,
					Devices:       kernel,
					Users:         kernel,
					Udev:          udev,
					DeviceTimeout: r.o.DeviceTimeout,
					Fetcher:       r.fetcher,
					KeepKey: func(name, dataURL string) {
						if r.state.LuksPersistKeyFiles == nil {
							r.state.LuksPersistKeyFiles = map[string]string{}
						}
						r.state.LuksPersistKeyFiles[name] = dataURL
					},
					Formatted: m.add,
					// In the initramfs only: elsewhere the host loads what it
					// mounts, and a test must not load modules.
					LoadModules: inInitramfs(),
					// flint-neednet started the network without waiting
					// for it: a custom clevis pin that needs it waits.
					AwaitNetwork: networkComingUp(r.o.NeedNet),
					NetworkUp:    resource.NetworkUp,
				})
				if err == nil {
					r.markRootFormatted(&m, filepath.Join(filepath.Dir(r.o.StateFile), RootFormattedFlag))
				}
				return err
			},
		},
		{
			name:    "mount",
			acquire: fromCache,
			run: func(ctx context.Context, r *stageRun) error {
				created, err := mount.Run(ctx, mount.Deps{
					Filesystems: r.config.Storage.Filesystems,
					Root:        r.o.Root,
					Logger:      r.log,
					Runner:      sys.Runner{Logger: r.log.With(oplog.OpKey, "command")},
				})
				for _, dir := range created {
					if !slices.Contains(r.state.NotatedDirectories, dir) {
						r.state.NotatedDirectories = append(r.state.NotatedDirectories, dir)
					}
				}
				return err
			},
		},
		{
			name:    "files",
			acquire: fromCache,
			run: func(ctx context.Context, r *stageRun) error {
				userConfig := false
				for _, c := range r.state.FetchedConfigs {
					userConfig = userConfig || c.Kind == "user"
				}
				prog := newProgress(r.o.StateFile+progressSuffix, r.state)
				err := files.Run(ctx, files.Deps{
					Config: r.config,
					Logger: r.log,
					Root:   r.o.Root,
					// No logger: useradd's argv holds password
					// hashes; the stage logs argv redacted.
					Runner:             sys.Runner{},
					Fetcher:            r.fetcher,
					LuksKeys:           r.state.LuksPersistKeyFiles,
					NotatedDirectories: r.state.NotatedDirectories,
					UserConfigProvided: userConfig,
					AuthorizedKeysFile: r.o.AuthorizedKeysFile,
					Progress:           prog,
				})
				if cerr := prog.close(&r.state); err == nil && cerr != nil {
					err = fmt.Errorf("state journal: %w", cerr)
				}
				if err == nil {
					// Written to /etc/luks: the keys leave the state.
					r.state.LuksPersistKeyFiles = nil
				}
				return err
			},
		},
		{
			name:    "umount",
			acquire: fromCache,
			run: func(ctx context.Context, r *stageRun) error {
				return umount.Run(ctx, umount.Deps{
					Filesystems: r.config.Storage.Filesystems,
					Root:        r.o.Root,
					Logger:      r.log,
					Unmounter:   sys.Mounter{},
				})
			},
		},
	}
}

// Stages returns the names of the stages, in boot order.
func Stages() []string {
	var names []string
	for _, s := range stageList() {
		names = append(names, s.name)
	}
	return names
}

// Run runs one stage. Its error starts with "stage <name>:" and wraps
// ErrUnknownStage for a stage name not in the list, ErrSetup when the
// engine could not get ready (the state file, the fetcher), and otherwise
// says why the stage failed.
func Run(ctx context.Context, o Options) error {
	return run(ctx, o, stageList())
}

// run is Run with the stage list as a parameter, for tests.
func run(ctx context.Context, o Options, list []stage) error {
	var st stage
	found := false
	for _, s := range list {
		if s.name == o.Stage {
			st, found = s, true
		}
	}
	if !found {
		var names []string
		for _, s := range list {
			names = append(names, s.name)
		}
		return fmt.Errorf("stage %s: %w (known stages: %s)", o.Stage, ErrUnknownStage, strings.Join(names, ", "))
	}
	o = o.withDefaults()
	log := o.Logger.With(oplog.StageKey, st.name)
	log.Info("flint "+o.Version+" running stage "+st.name, "platform", o.Platform.ID, "root", o.Root)
	start := time.Now()
	r := &stageRun{o: o, stage: st, log: log, offline: st.acquire == fetchOffline}
	if err := r.run(ctx); err != nil {
		log.Log(ctx, oplog.LevelCritical, "stage failed", "duration", time.Since(start).Round(time.Millisecond), "error", err,
			"MESSAGE_ID", StageFailedMessageID)
		return fmt.Errorf("stage %s: %w", st.name, err)
	}
	log.Info("stage finished", "duration", time.Since(start).Round(time.Millisecond))
	return nil
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
	if o.NewFetcher == nil {
		version, platform := o.Version, o.Platform.ID
		idle := o.FetchIdleTimeout
		if idle == 0 {
			idle = idleTimeoutKarg(o)
		}
		neednet := o.NeedNet
		o.NewFetcher = func(log *slog.Logger, offline bool) (Fetcher, error) {
			return resource.New(resource.Options{Logger: log, Offline: offline, Version: version, Platform: platform, IdleTimeout: idle,
				AwaitNetwork: !offline && networkComingUp(neednet)}), nil
		}
	}
	return o
}

// stageRun is one run of one stage.
type stageRun struct {
	o       Options
	stage   stage
	log     *slog.Logger
	offline bool
	fetcher Fetcher
	state   State
	// config is the full config the stage runs with: base configs with
	// the user config merged over them.
	config config.Config
	// parser parses every config the stage reads, within its size limit.
	parser *fetch.Parser
}

// maxConfigSize returns Options.MaxConfigSize, else the value of the kernel
// argument ArgMaxConfigSize, else config.DefaultMaxSize. A command line
// that cannot be read leaves the default: the command line source reports
// that itself, when it comes to it.
func (r *stageRun) maxConfigSize() (int64, error) {
	if r.o.MaxConfigSize > 0 {
		return r.o.MaxConfigSize, nil
	}
	args, err := platform.ReadCmdline(r.o.ProviderEnv, r.o.CmdlinePath)
	if err != nil {
		return config.DefaultMaxSize, nil
	}
	v, ok := args.Lookup(ArgMaxConfigSize)
	if !ok {
		return config.DefaultMaxSize, nil
	}
	n, err := config.ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("kernel argument %s: %w", ArgMaxConfigSize, err)
	}
	return n, nil
}

func (r *stageRun) run(ctx context.Context) error {
	var err error
	if r.state, err = loadState(r.o.StateFile); err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if r.fetcher, err = r.o.NewFetcher(r.log.With(oplog.OpKey, "fetch"), r.offline); err != nil {
		return fmt.Errorf("%w: creating the fetcher: %w", ErrSetup, err)
	}
	maxSize, err := r.maxConfigSize()
	if err != nil {
		return err
	}
	r.parser = &fetch.Parser{Logger: r.log, MaxSize: maxSize, LimitHint: "; the kernel argument " + ArgMaxConfigSize + " raises the limit"}
	if r.stage.acquire != fromCache {
		r.parser.OnSize = r.o.ConfigSize
	}
	// A remote config over the limit is refused at its first byte past
	// it, not downloaded whole and then refused (fetch.Parser).
	r.fetcher.SetConfigLimit(maxSize)
	base, baseFound, err := r.baseConfig()
	if err != nil {
		return err
	}

	var user config.Config
	switch r.stage.acquire {
	case fetchOffline, fetchOnline:
		if r.stage.acquire == fetchOnline && exists(r.o.ConfigCache) {
			r.log.Info("fetch-offline already cached the config without the network: nothing to fetch", "path", r.o.ConfigCache)
			return nil
		}
		if r.o.Platform.New == nil {
			return fmt.Errorf("%w: no provider for platform %q", ErrSetup, r.o.Platform.ID)
		}
		var fetched []FetchedConfig
		user, fetched, err = fetch.Acquire(ctx, fetch.AcquireDeps{
			Platform:     r.o.Platform,
			ConfigDirs:   r.o.ConfigDirs,
			CmdlinePath:  r.o.CmdlinePath,
			Env:          r.o.ProviderEnv,
			Fetcher:      r.fetcher,
			FetchTimeout: r.o.FetchTimeout,
			ConfigCache:  r.o.ConfigCache,
			Offline:      r.offline,
			Base:         baseFound,
			Parser:       r.parser,
			Logger:       r.log,
		})
		if err == nil {
			r.state.FetchedConfigs = fetched
		}
		if r.offline && errors.Is(err, resource.ErrNeedNet) {
			// Ignition's first neednet case: the config itself
			// needs the network. No cache: the fetch stage does it all.
			r.log.Info("getting the config needs the network: writing the neednet flag and leaving the config to the fetch stage", "flag", r.o.NeedNet, "reason", err)
			if err := signalNeedNet(r.o.NeedNet); err != nil {
				return err
			}
			return r.saveState()
		}
		if err != nil {
			return err
		}
	default:
		if user, err = r.readCache(ctx); err != nil {
			return err
		}
	}

	if baseFound || user.Ignition.Version == "" {
		r.config = config.Merge(base, user)
	} else {
		// Merging over the empty base (nothing but the newest version)
		// would copy the whole user config to yield it unchanged: the
		// user config's own version wins, every other field of the base
		// is empty.
		r.config = user
	}
	err = r.stage.run(ctx, r)
	if r.offline && errors.Is(err, resource.ErrNeedNet) {
		// The second case: the config is cached, but later stages
		// fetch from the network.
		r.log.Info("later stages need the network: writing the neednet flag", "flag", r.o.NeedNet, "reason", err)
		err = signalNeedNet(r.o.NeedNet)
	}
	if err != nil {
		if b, rerr := config.RenderRedacted(r.config); rerr == nil {
			r.log.Debug("the config the stage ran with, secrets redacted", "config", string(b))
		}
		return err
	}
	return r.saveState()
}

func (r *stageRun) saveState() error {
	if err := saveState(r.o.StateFile, r.state); err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	return nil
}

// op starts an operation on the stage's logger.
func (r *stageRun) op(name, what string) *oplog.Op {
	return oplog.Begin(r.log, name, what)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
