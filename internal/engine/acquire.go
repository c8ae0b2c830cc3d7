package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/butane"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/providers"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

// baseConfig reads and merges the base configs: base.d, then
// base.platform.d/<platform> on top, each sorted by file name. It reports
// whether there was any. A base config that does not parse fails the stage
// (Ignition ignores broken files in base.platform.d; flint does not,
// since a machine provisioned without them is not the one the distro
// meant).
func (r *stageRun) baseConfig() (config.Config, bool, error) {
	base := emptyConfig()
	found := false
	subs := []string{providers.BaseDir}
	if id := r.o.Platform.ID; id != "" {
		subs = append(subs, filepath.Join(providers.PlatformBaseDir, id))
	}
	op := r.op("base", "reading base configs")
	for _, sub := range subs {
		files, err := providers.ReadBaseConfigs(r.o.ConfigDirs, sub)
		if err != nil {
			return base, false, op.Fail(err)
		}
		for _, f := range files {
			cfg, err := r.parse(f.Raw, "base config "+f.Path)
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

// fetchConfig gets the user config from the first source that has one,
// renders it (ignition.config.replace and merge), validates the result,
// and caches it.
func (r *stageRun) fetchConfig(ctx context.Context) (config.Config, error) {
	r.fetcher.SetTotalTimeout(r.o.FetchTimeout)
	raw, source, err := r.fetchFromSources(ctx)
	if err != nil {
		return config.Config{}, err
	}
	user := emptyConfig()
	var declared config.Version
	found := raw != nil
	if found {
		// raw is not used after this: its memory can go while the config
		// is parsed, which holds a copy.
		if user, declared, err = r.parseDeclared(raw, "user config from "+source); err != nil {
			return config.Config{}, err
		}
		r.fetched = append(r.fetched, FetchedConfig{Kind: "user", Source: source})
	}
	// Parsing checked the user config with the rules of the version it
	// declares; what gets cached is checked once with the newest rules, as
	// Ignition does, since older rules differ (before 3.3 a link needs
	// no target). Only a config that declares the newest version and
	// names no other config was already checked with those very rules.
	checked := found && declared == config.V3_7Exp &&
		user.Ignition.Config.Replace.Source == nil && len(user.Ignition.Config.Merge) == 0

	rendered, err := r.render(ctx, user)
	if err != nil {
		return config.Config{}, err
	}
	if !checked {
		report := rendered.Validate()
		r.logReport("rendered config", report)
		if report.IsFatal() {
			return config.Config{}, fmt.Errorf("%w: %s", ErrInvalidConfig, summary(report))
		}
	}
	// Later fetches (CA bundles now, files in later stages) follow the
	// rendered config's timeouts, proxy and CAs.
	if err := r.fetcher.Configure(ctx, rendered.Ignition); err != nil {
		return config.Config{}, fmt.Errorf("applying the config's fetch settings: %w", err)
	}
	if rendered, err = r.inlineCAs(ctx, rendered); err != nil {
		return config.Config{}, err
	}
	if err := r.writeCache(rendered); err != nil {
		return config.Config{}, err
	}
	r.state.FetchedConfigs = r.fetched
	for _, f := range r.fetched {
		referenced := ""
		if f.Referenced {
			referenced = "referenced "
		}
		r.log.Info(fmt.Sprintf("fetched %s%s config from %q", referenced, f.Kind, f.Source),
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
	p    providers.Provider
}

// fetchFromSources asks the kernel command line, then user.ign, then the
// platform; the first that is there (does not answer ErrNoProvider) wins.
// It returns nil data when that source holds no config (an empty config),
// and the source's name.
func (r *stageRun) fetchFromSources(ctx context.Context) ([]byte, string, error) {
	if r.o.Platform.New == nil {
		return nil, "", fmt.Errorf("%w: no provider for platform %q", ErrSetup, r.o.Platform.ID)
	}
	env := r.providerEnv()
	sources := []source{
		{"cmdline", providers.NewCmdline(env, r.o.CmdlinePath)},
		{"system", providers.NewSystem(env, r.o.ConfigDirs)},
		{r.o.Platform.ID, r.o.Platform.New(env)},
	}
	for _, s := range sources {
		op := r.op("source", "looking for the user config: "+s.name)
		raw, err := s.p.FetchConfig(ctx)
		switch {
		case errors.Is(err, providers.ErrNoProvider):
			op.Finish("result", "not here", "reason", err)
			continue
		case errors.Is(err, providers.ErrNoConfig) || err == nil && len(bytes.TrimSpace(raw)) == 0:
			op.Finish("result", "no user config: continuing with an empty config")
			return nil, s.name, nil
		case r.offline && errors.Is(err, resource.ErrNeedNet):
			op.Finish("result", "needs the network", "reason", err)
			return nil, s.name, err
		case err != nil:
			return nil, s.name, op.Fail(fmt.Errorf("fetching the user config from %s: %w", s.name, sizeHint(err)))
		}
		op.Finish("result", "found", "bytes", len(raw))
		return raw, s.name, nil
	}
	return nil, "", fmt.Errorf("%w: nothing on the kernel command line, no %s in %s, and platform %q found none on this machine",
		ErrNoSource, providers.UserConfigName, strings.Join(r.o.ConfigDirs.Ordered(), ", "), r.o.Platform.ID)
}

// providerEnv is the sources' environment: the options' base with the
// engine's fetcher, the real mounter and runner, and its logger.
func (r *stageRun) providerEnv() providers.Env {
	env := r.o.ProviderEnv
	if env.Getter == nil {
		env.Getter = r.fetcher
	}
	if env.Fetcher == nil {
		env.Fetcher = r.fetcher
	}
	if env.Mounter == nil {
		env.Mounter = sys.Mounter{}
	}
	if env.Runner == nil {
		env.Runner = sys.Runner{Logger: r.log.With(oplog.OpKey, "source")}
	}
	if env.Logger == nil {
		env.Logger = r.log.With(oplog.OpKey, "source")
	}
	return env
}

// render follows ignition.config.replace and merge, fetching each named
// config with the settings the spec says govern it.
func (r *stageRun) render(ctx context.Context, user config.Config) (config.Config, error) {
	load := func(settings config.Config, res config.Resource) (config.Config, error) {
		src := ""
		if res.Source != nil {
			src = *res.Source
		}
		shown := config.DescribeURL(src)
		op := r.op("render", "fetching referenced config "+shown)
		if err := r.fetcher.Configure(ctx, settings.Ignition); err != nil {
			return config.Config{}, r.endFetch(op, fmt.Errorf("applying the fetch settings: %w", err))
		}
		raw, err := r.fetcher.FetchConfig(ctx, res)
		if err != nil {
			return config.Config{}, r.endFetch(op, sizeHint(err))
		}
		cfg, err := r.parse(raw, "referenced config "+shown)
		if err != nil {
			return config.Config{}, op.Fail(err)
		}
		op.Finish()
		r.fetched = append(r.fetched, FetchedConfig{Kind: "user", Source: shown, Referenced: true})
		return cfg, nil
	}
	// Render's errors and the fetcher's name sources through
	// config.DescribeURL: no data URL content or credential reaches them.
	return config.Render(user, load)
}

// sizeHint adds to a fetch refused for its size (the fetcher stops at
// the stage's config limit) how to raise the limit.
func sizeHint(err error) error {
	if errors.Is(err, resource.ErrTooLarge) {
		return fmt.Errorf("%w; the kernel argument %s raises the limit", err, ArgMaxConfigSize)
	}
	return err
}

// endFetch ends a fetch operation that failed: needing the network is no
// failure in fetch-offline.
func (r *stageRun) endFetch(op *oplog.Op, err error) error {
	if r.offline && errors.Is(err, resource.ErrNeedNet) {
		op.Finish("result", "needs the network")
		return err
	}
	return op.Fail(err)
}

// inlineCAs replaces every remote certificate authority with a data URL of
// its contents, as Ignition does, so the later stages trust the same
// CAs without fetching them again (and, with the network down, at all).
func (r *stageRun) inlineCAs(ctx context.Context, cfg config.Config) (config.Config, error) {
	cas := cfg.Ignition.Security.TLS.CertificateAuthorities
	if len(cas) == 0 {
		return cfg, nil
	}
	out := slices.Clone(cas)
	for i, ca := range cas {
		if ca.Source == nil || *ca.Source == "" || isDataURL(*ca.Source) {
			continue
		}
		op := r.op("cache", "inlining certificate authority "+config.DescribeURL(*ca.Source))
		bundle, err := r.fetcher.CABundle(ctx, ca)
		if err != nil {
			return cfg, r.endFetch(op, fmt.Errorf("certificate authority %d: %w", i, err))
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
// hold password hashes and key material; Ignition uses 0640.
func (r *stageRun) writeCache(cfg config.Config) error {
	op := r.op("cache", "writing the config cache "+r.o.ConfigCache)
	// Streamed to the file: json.Marshal would build the encoding in
	// memory first, megabytes for a config of thousands of files.
	if err := writeRunFile(r.o.ConfigCache, 0o600, cfg.WriteJSON); err != nil {
		return op.Fail(err)
	}
	op.Finish()
	return nil
}

// readCache reads the config the fetch stages cached, as Ignition
// does: no validation (it was validated before it was written), and the
// fetcher set up with its timeouts, proxy and CAs.
func (r *stageRun) readCache(ctx context.Context) (config.Config, error) {
	op := r.op("cache", "reading the config cache "+r.o.ConfigCache)
	raw, err := os.ReadFile(r.o.ConfigCache)
	if errors.Is(err, fs.ErrNotExist) {
		return config.Config{}, op.Fail(fmt.Errorf("%w at %s: the fetch stages did not run or did not succeed", ErrNoCache, r.o.ConfigCache))
	}
	if err != nil {
		return config.Config{}, op.Fail(fmt.Errorf("reading the config cache: %w", err))
	}
	cfg, err := config.ParseRendered(raw)
	if err != nil {
		return config.Config{}, op.Fail(fmt.Errorf("config cache %s: %w", r.o.ConfigCache, err))
	}
	if err := r.fetcher.Configure(ctx, cfg.Ignition); err != nil {
		return config.Config{}, op.Fail(fmt.Errorf("applying the config's fetch settings: %w", err))
	}
	op.Finish()
	return cfg, nil
}

// parse parses a config and logs its report; what names it in both.
func (r *stageRun) parse(raw []byte, what string) (config.Config, error) {
	cfg, _, err := r.parseDeclared(raw, what)
	return cfg, err
}

// parseDeclared is parse, also returning the version the config declares.
// A config larger than the stage's limit is refused unparsed.
//
// Every config read at boot comes through here (user, base and referenced
// configs): a Butane config, YAML with a top-level variant, is translated
// first, as Ignition 2.27 does; its local file references are refused,
// there being no files directory on the node. An openshift config gives
// its config, not the MachineConfig around it.
func (r *stageRun) parseDeclared(raw []byte, what string) (config.Config, config.Version, error) {
	if err := config.CheckSize(what, int64(len(raw)), r.maxSize); err != nil {
		return config.Config{}, config.Version{}, fmt.Errorf("%w; the kernel argument %s raises the limit", err, ArgMaxConfigSize)
	}
	r.configBytes += int64(len(raw))
	if r.o.ConfigSize != nil && r.stage.acquire != fromCache {
		r.o.ConfigSize(r.configBytes)
	}
	if butane.IsButane(raw) {
		res, err := butane.Translate(raw, butane.Options{AtBoot: true, Raw: true})
		r.logReport(what+" (Butane)", res.Report)
		if err != nil {
			return config.Config{}, config.Version{}, fmt.Errorf("%s: Butane config: %w: %s", what, err, summary(res.Report))
		}
		r.log.Info("translated a Butane config", "config", what, "version", res.Version.String())
		// The translation validated the result and logged what it
		// found, at the YAML's lines: parse it without logging again.
		cfg, v, _, err := config.ParseDeclared(res.Config)
		if err != nil {
			return config.Config{}, v, fmt.Errorf("%s: translated from Butane: %w", what, err)
		}
		return cfg, v, nil
	}
	cfg, v, report, err := config.ParseDeclared(raw)
	r.logReport(what, report)
	if err != nil {
		if s := summary(report); s != "" {
			return config.Config{}, v, fmt.Errorf("%s: %w: %s", what, err, s)
		}
		return config.Config{}, v, fmt.Errorf("%s: %w", what, err)
	}
	return cfg, v, nil
}

// logReport logs every entry of a config's report at its severity.
func (r *stageRun) logReport(what string, report config.Report) {
	for _, e := range report.Entries {
		level := slog.LevelInfo
		switch e.Severity {
		case config.SeverityError:
			level = slog.LevelError
		case config.SeverityWarning:
			level = slog.LevelWarn
		}
		r.log.Log(context.Background(), level, e.String(), "config", what)
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
