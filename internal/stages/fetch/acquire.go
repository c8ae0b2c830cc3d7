package fetch

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/input"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/sys"
)

// FetchedConfigMessageID is the journal MESSAGE_ID of the "config fetched"
// entries. It is Ignition's, because distro tooling (the console's
// "user config applied" notice, test suites) looks entries up by it and by
// IGNITION_CONFIG_TYPE=user.
const FetchedConfigMessageID = "57124006b5c94805b77ce473e92a8aeb"

var (
	// ErrNoSource means no config source exists on this machine: nothing
	// on the kernel command line, no user.ign, and the platform provider
	// says the machine is not on its platform.
	ErrNoSource = errors.New("config provider was not online")
	// ErrInvalidConfig means the rendered config breaks the spec's rules.
	ErrInvalidConfig = errors.New("merging configs resulted in an invalid config")
)

// Fetcher is what acquiring the config needs of *resource.Fetcher.
type Fetcher interface {
	Configure(ctx context.Context, ign config.Ignition) error
	SetTotalTimeout(d time.Duration)
	FetchConfig(ctx context.Context, res config.Resource) ([]byte, error)
	CABundle(ctx context.Context, ca config.Resource) ([]byte, error)
	Get(ctx context.Context, r resource.Request) ([]byte, error)
}

// AcquireDeps is what acquiring the user config needs.
type AcquireDeps struct {
	// Platform's provider is asked last, after the kernel command line and
	// user.ign in ConfigDirs.
	Platform   platform.Platform
	ConfigDirs platform.ConfigDirs
	// Cmdline is the kernel command line, the first source.
	Cmdline stages.Cmdline
	// Env is the base of the sources' environment; what is nil is filled:
	// Getter and Fetcher with Fetcher, Mounter and Runner with package
	// sys's, Logger with Logger.
	Env platform.Env
	// Fetcher fetches the user config, the configs it names and its CA
	// bundles; it is offline in fetch-offline.
	Fetcher Fetcher
	// FetchTimeout bounds the fetch of the user config from its source,
	// retries included (0: no bound); the config's own timeouts apply
	// after that.
	FetchTimeout time.Duration
	// ConfigCache is where the rendered config is cached for the later
	// stages.
	ConfigCache string
	// Offline: needing the network is no failure, only the answer
	// (resource.ErrNeedNet) that fetch-offline hands to fetch.
	Offline bool
	// Base: there are base configs; they are listed first among the
	// configs read.
	Base bool
	// Parser parses the user config and every config it names; nil: one
	// with config.DefaultMaxSize.
	Parser *Parser
	Logger *slog.Logger
}

// Acquire gets the user config from the first source that has one,
// renders it (ignition.config.replace and merge), validates the result,
// and caches it. It returns the rendered config and every config read.
func Acquire(ctx context.Context, d AcquireDeps) (config.Config, []stages.Fetched, error) {
	if d.Parser == nil {
		d.Parser = &Parser{Logger: d.Logger, MaxSize: config.DefaultMaxSize}
	}
	a := &acquirer{d: d}
	if d.Base {
		a.fetched = append(a.fetched, stages.Fetched{Kind: "base", Source: "system"})
	}
	cfg, err := a.fetchConfig(ctx)
	return cfg, a.fetched, err
}

// acquirer is one acquisition of the user config.
type acquirer struct {
	d       AcquireDeps
	fetched []stages.Fetched
	// settings are the fetch settings the fetcher was last configured
	// with, nil before the first: the fetcher is configured only when
	// they change.
	settings *fetchSettings
}

// fetchSettings are the parts of a config's ignition section that govern
// fetching.
type fetchSettings struct {
	proxy    config.Proxy
	security config.Security
	timeouts config.Timeouts
}

// configure applies ign's fetch settings, unless the fetcher has them.
func (a *acquirer) configure(ctx context.Context, ign config.Ignition) error {
	s := fetchSettings{ign.Proxy, ign.Security, ign.Timeouts}
	if a.settings != nil && reflect.DeepEqual(*a.settings, s) {
		return nil
	}
	if err := a.d.Fetcher.Configure(ctx, ign); err != nil {
		return err
	}
	a.settings = &s
	return nil
}

func (a *acquirer) op(name, what string) *oplog.Op {
	return oplog.Begin(a.d.Logger, name, what)
}

func (a *acquirer) fetchConfig(ctx context.Context) (config.Config, error) {
	a.d.Fetcher.SetTotalTimeout(a.d.FetchTimeout)
	raw, source, err := a.fetchFromSources(ctx)
	if err != nil {
		return config.Config{}, err
	}
	user := config.Empty()
	var declared config.Version
	found := raw != nil
	if found {
		// raw is not used after this: its memory can go while the config
		// is parsed, which holds a copy.
		if user, declared, err = a.d.Parser.Parse(raw, "user config from "+source); err != nil {
			return config.Config{}, err
		}
		a.fetched = append(a.fetched, stages.Fetched{Kind: "user", Source: source})
	}
	// Parsing checked the user config with the rules of the version it
	// declares; what gets cached is checked once with the newest rules, as
	// Ignition does, since older rules differ (before 3.3 a link needs
	// no target). Only a config that declares the newest version and
	// names no other config was already checked with those very rules.
	checked := found && declared == config.Newest &&
		user.Ignition.Config.Replace.Source == nil && len(user.Ignition.Config.Merge) == 0

	rendered, err := a.render(ctx, user)
	if err != nil {
		return config.Config{}, err
	}
	if !checked {
		report := rendered.Validate()
		logReport(a.d.Logger, "rendered config", report)
		if report.IsFatal() {
			return config.Config{}, fmt.Errorf("%w: %s", ErrInvalidConfig, summary(report))
		}
	}
	// Later fetches (CA bundles now, files in later stages) follow the
	// rendered config's timeouts, proxy and CAs.
	if err := a.configure(ctx, rendered.Ignition); err != nil {
		return config.Config{}, fmt.Errorf("applying the config's fetch settings: %w", err)
	}
	if rendered, err = a.inlineCAs(ctx, rendered); err != nil {
		return config.Config{}, err
	}
	if err := a.writeCache(rendered); err != nil {
		return config.Config{}, err
	}
	for _, f := range a.fetched {
		referenced := ""
		if f.Referenced {
			referenced = "referenced "
		}
		a.d.Logger.Info(fmt.Sprintf("fetched %s%s config from %q", referenced, f.Kind, f.Source),
			"MESSAGE_ID", FetchedConfigMessageID,
			"IGNITION_CONFIG_TYPE", f.Kind,
			"IGNITION_CONFIG_SRC", f.Source,
			"IGNITION_CONFIG_REFERENCED", strconv.FormatBool(f.Referenced))
	}
	return rendered, nil
}

// source is one place the user config may come from.
type source struct {
	name string
	p    platform.Provider
}

// fetchFromSources asks the kernel command line, then user.ign, then the
// platform; the first that is there (does not answer ErrNoProvider) wins.
// It returns nil data when that source holds no config (an empty config),
// and the source's name.
func (a *acquirer) fetchFromSources(ctx context.Context) ([]byte, string, error) {
	env := a.providerEnv()
	sources := []source{
		{"cmdline", platform.NewCmdlineFrom(env, a.d.Cmdline.Args, a.d.Cmdline.Err)},
		{"system", platform.NewSystem(env, a.d.ConfigDirs)},
		{a.d.Platform.ID, a.d.Platform.New(env)},
	}
	for _, s := range sources {
		op := a.op("source", "looking for the user config: "+s.name)
		raw, err := s.p.FetchConfig(ctx)
		switch {
		case errors.Is(err, platform.ErrNoProvider):
			op.Finish("result", "not here", "reason", err)
			continue
		case errors.Is(err, platform.ErrNoConfig) || err == nil && len(bytes.TrimSpace(raw)) == 0:
			op.Finish("result", "no user config: continuing with an empty config")
			return nil, s.name, nil
		case a.d.Offline && errors.Is(err, resource.ErrNeedNet):
			op.Finish("result", "needs the network", "reason", err)
			return nil, s.name, err
		case err != nil:
			return nil, s.name, op.Fail(fmt.Errorf("fetching the user config from %s: %w", s.name, a.sizeHint(err)))
		}
		op.Finish("result", "found", "bytes", len(raw))
		return raw, s.name, nil
	}
	return nil, "", fmt.Errorf("%w: nothing on the kernel command line, no %s in %s, and platform %q found none on this machine",
		ErrNoSource, platform.UserConfigName, strings.Join(a.d.ConfigDirs.Ordered(), ", "), a.d.Platform.ID)
}

// providerEnv is the sources' environment: the base with the fetcher, the
// real mounter and runner, and the logger.
func (a *acquirer) providerEnv() platform.Env {
	env := a.d.Env
	if env.Getter == nil {
		env.Getter = a.d.Fetcher
	}
	if env.Fetcher == nil {
		env.Fetcher = a.d.Fetcher
	}
	if env.Mounter == nil {
		env.Mounter = sys.Mounter{}
	}
	if env.Runner == nil {
		env.Runner = sys.Runner{Logger: a.d.Logger.With(oplog.OpKey, "source")}
	}
	if env.Logger == nil {
		env.Logger = a.d.Logger.With(oplog.OpKey, "source")
	}
	return env
}

// render follows ignition.config.replace and merge, fetching each named
// config with the settings the spec says govern it.
func (a *acquirer) render(ctx context.Context, user config.Config) (config.Config, error) {
	load := func(settings config.Config, res config.Resource) (config.Config, error) {
		src := ""
		if res.Source != nil {
			src = *res.Source
		}
		shown := config.DescribeURL(src)
		op := a.op("render", "fetching referenced config "+shown)
		if err := a.configure(ctx, settings.Ignition); err != nil {
			return config.Config{}, a.endFetch(op, fmt.Errorf("applying the fetch settings: %w", err))
		}
		raw, err := a.d.Fetcher.FetchConfig(ctx, res)
		if err != nil {
			return config.Config{}, a.endFetch(op, a.sizeHint(err))
		}
		cfg, _, err := a.d.Parser.Parse(raw, "referenced config "+shown)
		if err != nil {
			return config.Config{}, op.Fail(err)
		}
		op.Finish()
		a.fetched = append(a.fetched, stages.Fetched{Kind: "user", Source: shown, Referenced: true})
		return cfg, nil
	}
	// Render's errors and the fetcher's name sources through
	// config.DescribeURL: no data URL content or credential reaches them.
	return config.Render(user, load)
}

// sizeHint adds to a fetch refused for its size (the fetcher stops at
// the stage's config limit) how to raise the limit: the parser's hint.
func (a *acquirer) sizeHint(err error) error {
	if errors.Is(err, resource.ErrTooLarge) && a.d.Parser != nil {
		return fmt.Errorf("%w%s", err, a.d.Parser.LimitHint)
	}
	return err
}

// endFetch ends a fetch operation that failed: needing the network is no
// failure in fetch-offline.
func (a *acquirer) endFetch(op *oplog.Op, err error) error {
	if a.d.Offline && errors.Is(err, resource.ErrNeedNet) {
		op.Finish("result", "needs the network")
		return err
	}
	return op.Fail(err)
}

// inlineCAs replaces every remote certificate authority with a data URL of
// its contents, as Ignition does, so the later stages trust the same
// CAs without fetching them again (and, with the network down, at all).
func (a *acquirer) inlineCAs(ctx context.Context, cfg config.Config) (config.Config, error) {
	cas := cfg.Ignition.Security.TLS.CertificateAuthorities
	if len(cas) == 0 {
		return cfg, nil
	}
	out := slices.Clone(cas)
	for i, ca := range cas {
		if ca.Source == nil || *ca.Source == "" || isDataURL(*ca.Source) {
			continue
		}
		op := a.op("cache", "inlining certificate authority "+config.DescribeURL(*ca.Source))
		bundle, err := a.d.Fetcher.CABundle(ctx, ca)
		if err != nil {
			return cfg, a.endFetch(op, fmt.Errorf("certificate authority %d: %w", i, err))
		}
		data := "data:;base64," + base64.StdEncoding.EncodeToString(bundle)
		// The hash is of the decompressed bundle, which is what the data
		// URL holds: it still applies. Headers and compression do not.
		out[i] = config.Resource{Source: &data, Verification: ca.Verification}
		op.Finish("bytes", len(bundle))
	}
	cfg.Ignition.Security.TLS.CertificateAuthorities = out
	return cfg, nil
}

// writeCache writes the rendered user config (not the base configs, which
// every stage merges again) for the later stages: mode 0600, since it can
// hold password hashes and key material; Ignition uses 0640. Missing
// parent directories are made 0700.
func (a *acquirer) writeCache(cfg config.Config) error {
	path := a.d.ConfigCache
	op := a.op("cache", "writing the config cache "+path)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return op.Fail(fmt.Errorf("creating directory for %s: %w", path, err))
	}
	// Streamed to the file: json.Marshal would build the encoding in
	// memory first, megabytes for a config of thousands of files.
	if err := sys.WriteFileAtomic(path, 0o600, cfg.WriteJSON); err != nil {
		return op.Fail(err)
	}
	op.Finish()
	return nil
}

// Parser parses the configs one stage reads at boot: user, base and
// referenced configs all come through Parse.
type Parser struct {
	Logger *slog.Logger
	// MaxSize is the largest config Parse reads (config.CheckSize);
	// larger ones are refused unparsed, with LimitHint after the error.
	MaxSize   int64
	LimitHint string
	// OnSize, when not nil, is called before each config is parsed, with
	// the size of all the configs read so far: what the stage needs in
	// memory grows with it.
	OnSize func(total int64)
	// total is the size of the configs read so far.
	total int64
}

// Parse parses one config and logs its report; what names it in both. It
// also returns the version the config declares.
//
// A Butane config, YAML with a top-level variant, is translated first, as
// Ignition 2.27 does; its local file references are refused, there being
// no files directory on the node. An openshift config gives its config,
// not the MachineConfig around it.
func (p *Parser) Parse(raw []byte, what string) (config.Config, config.Version, error) {
	if err := config.CheckSize(what, int64(len(raw)), p.MaxSize); err != nil {
		return config.Config{}, config.Version{}, fmt.Errorf("%w%s", err, p.LimitHint)
	}
	p.total += int64(len(raw))
	if p.OnSize != nil {
		p.OnSize(p.total)
	}
	log := p.Logger
	res, err := input.Read(raw, input.Options{AtBoot: true, Raw: true})
	if res.Kind == input.Butane {
		logReport(log, what+" (Butane)", res.Report)
		if err != nil {
			return config.Config{}, config.Version{}, fmt.Errorf("%s: Butane config: %w: %s", what, err, summary(res.Report))
		}
		log.Info("translated a Butane config", "config", what, "version", res.Version.String())
		// The translation validated the result and logged what it
		// found, at the YAML's lines; its model is the config its JSON
		// parses to (butane.Result.Model), which is not parsed again.
		return res.Model, res.Version, nil
	}
	logReport(log, what, res.Report)
	if err != nil {
		if s := summary(res.Report); s != "" {
			return config.Config{}, res.Version, fmt.Errorf("%s: %w: %s", what, err, s)
		}
		return config.Config{}, res.Version, fmt.Errorf("%s: %w", what, err)
	}
	return res.Model, res.Version, nil
}

// logReport logs every entry of a config's report at its severity.
func logReport(log *slog.Logger, what string, report config.Report) {
	for _, e := range report.Entries {
		level := slog.LevelInfo
		switch e.Severity {
		case config.SeverityError:
			level = slog.LevelError
		case config.SeverityWarning:
			level = slog.LevelWarn
		}
		log.Log(context.Background(), level, e.String(), "config", what)
	}
}

// summary returns a report's first error and how many more there are.
func summary(report config.Report) string {
	var first string
	n := 0
	for _, e := range report.Entries {
		if e.Severity != config.SeverityError {
			continue
		}
		if n == 0 {
			first = e.String()
		}
		n++
	}
	switch n {
	case 0:
		return ""
	case 1:
		return first
	}
	return fmt.Sprintf("%s (and %d more errors in the log)", first, n-1)
}

func isDataURL(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "data:")
}
