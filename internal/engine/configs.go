package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/platform"
)

// baseConfig reads and merges the base configs: base.d, then
// base.platform.d/<platform> on top, each sorted by file name. It reports
// whether there was any. A base config that does not parse fails the stage
// (Ignition ignores broken files in base.platform.d; flint does not,
// since a machine provisioned without them is not the one the distro
// meant). Every stage merges them again: only the user config is cached.
func (r *stageRun) baseConfig() (config.Config, bool, error) {
	base := config.Empty()
	found := false
	subs := []string{platform.BaseDir}
	if id := r.o.Platform.ID; id != "" {
		subs = append(subs, filepath.Join(platform.PlatformBaseDir, id))
	}
	op := r.op("base", "reading base configs")
	for _, sub := range subs {
		files, err := platform.ReadBaseConfigs(r.o.ConfigDirs, sub)
		if err != nil {
			return base, false, op.Fail(err)
		}
		for _, f := range files {
			cfg, _, err := r.parser.Parse(f.Raw, "base config "+f.Path)
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
