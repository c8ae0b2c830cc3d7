// Package fetch is the stage that runs after the distro brought the
// network up, when fetch-offline could not get the whole config (the
// neednet flag). Everything happens before it runs: the engine fetches,
// renders, validates and caches the config with a fetcher that may use
// the network. The stage itself only records that the config is in place.
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
