// Package fetch acquires the user config for the two fetch stages
// (Acquire): from the kernel command line, user.ign or the platform,
// rendered (ignition.config.replace and merge), validated, its CA bundles
// inlined, and cached for the later stages, with the fetcher configured
// once per distinct fetch settings. Parser reads every config met at boot,
// Butane configs translated first.
//
// It is also the fetch stage, which runs after the distro brought the
// network up when fetch-offline could not get the whole config (the
// neednet flag): the engine runs Acquire with a fetcher that may use the
// network, then Run records that the config is in place.
package fetch

import (
	"context"
	"log/slog"
)

// Deps is what the stage needs.
type Deps struct {
	Logger *slog.Logger
	// ConfigCache is where the engine cached the rendered config.
	ConfigCache string
}

// Run logs that the config is fetched and cached.
func Run(ctx context.Context, d Deps) error {
	d.Logger.Info("fetch complete: the config is cached for the later stages", "path", d.ConfigCache)
	return nil
}
