// Package fetch gets the config every stage runs with, end to end.
//
// It is the two fetch stages (Stage): fetch-offline, its offline mode,
// runs first with a fetcher that refuses the network; fetch runs after the
// distro brought the network up, when fetch-offline could not get the
// whole config. Each reads the base configs (base.d, then
// base.platform.d/<platform>), acquires the user config (Acquire: the
// kernel command line, user.ign or the platform; rendered through
// ignition.config.replace and merge, validated, its CA bundles inlined)
// and caches it for the later stages, merges it over the base configs,
// and leaves the flags the units after it key on: the neednet flag when
// the network is needed (Ignition's two cases: getting the config needs
// it, or later stages do, fetchoffline.NeedsNetwork), and the kargs
// stage's flag (kargs.SetWanted).
//
// The later stages get their config from the cache (FromCache), the base
// configs merged under it again: only the user config is cached. Parser
// reads every config met at boot, Butane configs translated first.
//
// Family: boot stages (internal/README.md).
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/fetchoffline"
	"github.com/flintboot/flint/internal/stages/kargs"
)

// ArgMaxConfigSize is the kernel argument that sets the largest config the
// stages read (Options.MaxConfigSize), in bytes or with a K, M or G suffix:
// flint.config.max_size=256M.
const ArgMaxConfigSize = "flint.config.max_size"

// ErrNoCache means a stage that reads the cached config found none.
var ErrNoCache = errors.New("no cached config")

// Options say where the configs are and how large they may be: what the
// fetch stages and the cache reader share.
type Options struct {
	// Platform is the ignition.platform.id's row of the platform table:
	// the fetch stages ask its provider last, and its base.platform.d
	// directory holds base configs.
	Platform platform.Platform
	// ConfigDirs are the system config directories (user.ign, base.d).
	ConfigDirs platform.ConfigDirs
	// ProviderEnv is the base of the sources' environment (AcquireDeps.Env).
	ProviderEnv platform.Env
	// FetchTimeout bounds the fetch of the user config from its source,
	// retries included (0: no bound).
	FetchTimeout time.Duration
	// MaxConfigSize is the largest config (user, referenced or base)
	// read, in bytes; 0 means the kernel argument ArgMaxConfigSize, else
	// config.DefaultMaxSize.
	MaxConfigSize int64
	// OnSize, when not nil, is called in the fetch stages before each
	// config is parsed, with the size of all the configs read so far
	// (Parser.OnSize).
	OnSize func(total int64)
}

// Stage is the fetch stage, and fetch-offline when e.Offline.
type Stage struct {
	Options
}

// Run gets the config and caches it, or leaves the neednet flag for the
// fetch stage; the package comment says how. In the fetch stage, a config
// fetch-offline already cached is not fetched again.
func (s Stage) Run(ctx context.Context, e *stages.Env) error {
	parser, err := s.parser(e)
	if err != nil {
		return err
	}
	base, baseFound, err := s.baseConfig(e, parser)
	if err != nil {
		return err
	}
	if !e.Offline && exists(e.Files.ConfigCache) {
		e.Logger.Info("fetch-offline already cached the config without the network: nothing to fetch", "path", e.Files.ConfigCache)
		return nil
	}
	if s.Platform.New == nil {
		return fmt.Errorf("%w: no provider for platform %q", stages.ErrSetup, s.Platform.ID)
	}
	user, fetched, err := Acquire(ctx, AcquireDeps{
		Platform:     s.Platform,
		ConfigDirs:   s.ConfigDirs,
		Cmdline:      e.Cmdline,
		Env:          s.ProviderEnv,
		Fetcher:      e.Fetcher,
		FetchTimeout: s.FetchTimeout,
		ConfigCache:  e.Files.ConfigCache,
		Offline:      e.Offline,
		Base:         baseFound,
		Parser:       parser,
		Logger:       e.Logger,
	})
	if err == nil {
		e.State.FetchedConfigs = fetched
	}
	if e.Offline && errors.Is(err, resource.ErrNeedNet) {
		// Ignition's first neednet case: the config itself needs the
		// network. No cache: the fetch stage does it all.
		e.Logger.Info("getting the config needs the network: writing the neednet flag and leaving the config to the fetch stage", "flag", e.Files.NeedNet, "reason", err)
		return signalNeedNet(e.Files.NeedNet)
	}
	if err != nil {
		return err
	}
	e.Config = merge(base, baseFound, user)
	if err := kargs.SetWanted(e.Logger, e.Files.Flag(kargs.WantedFlag), e.Config.KernelArguments); err != nil {
		return err
	}
	if e.Offline {
		return laterStagesNeeds(ctx, e)
	}
	e.Logger.Info("fetch complete: the config is cached for the later stages", "path", e.Files.ConfigCache)
	return nil
}

// laterStagesNeeds leaves the neednet flag when the stages after
// fetch-offline need the network (fetchoffline.Run): Ignition's second
// neednet case, the config cached but later stages fetching from the
// network.
func laterStagesNeeds(ctx context.Context, e *stages.Env) error {
	err := fetchoffline.Run(ctx, fetchoffline.Deps{Config: e.Config, Logger: e.Logger})
	if errors.Is(err, resource.ErrNeedNet) {
		e.Logger.Info("later stages need the network: writing the neednet flag", "flag", e.Files.NeedNet, "reason", err)
		return signalNeedNet(e.Files.NeedNet)
	}
	return err
}

// FromCache returns next run on the config the fetch stages cached, with
// the base configs merged under it again.
func FromCache(o Options, next stages.Stage) stages.Stage {
	return cached{o, next}
}

// cached is a later stage: the config from the cache, then the stage.
type cached struct {
	o    Options
	next stages.Stage
}

func (c cached) Run(ctx context.Context, e *stages.Env) error {
	// OnSize is the fetch stages' only: the cache was read before.
	o := c.o
	o.OnSize = nil
	parser, err := o.parser(e)
	if err != nil {
		return err
	}
	base, baseFound, err := o.baseConfig(e, parser)
	if err != nil {
		return err
	}
	user, err := readCache(ctx, e)
	if err != nil {
		return err
	}
	e.Config = merge(base, baseFound, user)
	return c.next.Run(ctx, e)
}

// merge returns the user config merged over the base configs.
func merge(base config.Config, baseFound bool, user config.Config) config.Config {
	if baseFound || user.Ignition.Version == "" {
		return config.Merge(base, user)
	}
	// Merging over the empty base (config.Empty) would copy the whole
	// user config to yield it unchanged: the user config's own version
	// wins, every other field of the base is empty.
	return user
}

// parser returns the parser of the stage's configs, within the size
// limit, and holds the fetcher to it: a remote config over the limit is
// refused at its first byte past it, not downloaded whole and then
// refused.
func (o Options) parser(e *stages.Env) (*Parser, error) {
	max, err := o.maxConfigSize(e.Cmdline)
	if err != nil {
		return nil, err
	}
	e.Fetcher.SetConfigLimit(max)
	return &Parser{Logger: e.Logger, MaxSize: max, OnSize: o.OnSize,
		LimitHint: "; the kernel argument " + ArgMaxConfigSize + " raises the limit"}, nil
}

// maxConfigSize returns Options.MaxConfigSize, else the value of the
// kernel argument ArgMaxConfigSize, else config.DefaultMaxSize. A command
// line that cannot be read leaves the default: the command line source
// reports that itself, when it comes to it.
func (o Options) maxConfigSize(cmdline stages.Cmdline) (int64, error) {
	if o.MaxConfigSize > 0 {
		return o.MaxConfigSize, nil
	}
	if cmdline.Err != nil {
		return config.DefaultMaxSize, nil
	}
	v, ok := cmdline.Args.Lookup(ArgMaxConfigSize)
	if !ok {
		return config.DefaultMaxSize, nil
	}
	n, err := config.ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("kernel argument %s: %w", ArgMaxConfigSize, err)
	}
	return n, nil
}

// baseConfig reads and merges the base configs: base.d, then
// base.platform.d/<platform> on top, each sorted by file name. It reports
// whether there was any. A base config that does not parse fails the stage
// (Ignition ignores broken files in base.platform.d; flint does not,
// since a machine provisioned without them is not the one the distro
// meant). Every stage merges them again: only the user config is cached.
func (o Options) baseConfig(e *stages.Env, parser *Parser) (config.Config, bool, error) {
	base := config.Empty()
	found := false
	subs := []string{platform.BaseDir}
	if id := o.Platform.ID; id != "" {
		subs = append(subs, filepath.Join(platform.PlatformBaseDir, id))
	}
	op := oplog.Begin(e.Logger, "base", "reading base configs")
	for _, sub := range subs {
		files, err := platform.ReadBaseConfigs(o.ConfigDirs, sub)
		if err != nil {
			return base, false, op.Fail(err)
		}
		for _, f := range files {
			cfg, _, err := parser.Parse(f.Raw, "base config "+f.Path)
			if err != nil {
				return base, false, op.Fail(err)
			}
			op.Log().Info("merging base config", "path", f.Path)
			base = config.Merge(base, cfg)
			found = true
		}
	}
	op.Finish("found", found)
	return base, found, nil
}

// readCache reads the config the fetch stages cached, as Ignition does:
// no validation (it was validated before it was written), and the fetcher
// set up with its timeouts, proxy and CAs.
func readCache(ctx context.Context, e *stages.Env) (config.Config, error) {
	path := e.Files.ConfigCache
	op := oplog.Begin(e.Logger, "cache", "reading the config cache "+path)
	cfg, err := parseCache(e, path)
	if err != nil {
		return config.Config{}, op.Fail(err)
	}
	if err := e.Fetcher.Configure(ctx, cfg.Ignition); err != nil {
		return config.Config{}, op.Fail(fmt.Errorf("applying the config's fetch settings: %w", err))
	}
	op.Finish()
	return cfg, nil
}

// parseCache returns the config cache at path: the engine's copy
// (stages.Env.Cache) when it parsed it already, else the file's.
func parseCache(e *stages.Env, path string) (config.Config, error) {
	if e.Cache != nil {
		return *e.Cache, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return config.Config{}, fmt.Errorf("%w at %s: the fetch stages did not run or did not succeed", ErrNoCache, path)
	}
	if err != nil {
		return config.Config{}, fmt.Errorf("reading the config cache: %w", err)
	}
	cfg, err := config.ParseRendered(raw)
	if err != nil {
		return config.Config{}, fmt.Errorf("config cache %s: %w", path, err)
	}
	return cfg, nil
}

// signalNeedNet creates the empty neednet flag file the distro's network
// bring-up keys on, with its parent directories.
func signalNeedNet(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating neednet flag: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("creating neednet flag: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("creating neednet flag: %w", err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
