package config

import (
	"errors"
	"fmt"
)

// MaxRenderDepth bounds how deeply configs may name other configs through
// ignition.config.merge and replace. Ignition has no bound, so a config
// that names itself fetches forever; a chain this deep is a mistake.
const MaxRenderDepth = 16

// ErrRenderDepth means configs name each other more than MaxRenderDepth deep,
// usually a loop.
var ErrRenderDepth = errors.New("configs named by ignition.config.merge or replace nest too deeply")

// Loader fetches, verifies and parses the config a resource names. settings
// is the config whose ignition section (timeouts, proxy, certificate
// authorities) governs the fetch.
type Loader func(settings Config, res Resource) (Config, error)

// Render follows ignition.config.replace and ignition.config.merge as the
// spec (and Ignition's renderer) defines them, and returns the final
// config:
//
//   - When replace has a source, the config it names replaces cfg entirely
//     (cfg's merge list and every other field are discarded), its own
//     settings govern further fetches, and it is rendered in turn.
//   - Otherwise each merge entry, in order, is loaded; the settings become
//     those of the result so far merged with the new config; the new config
//     is rendered recursively (depth first); and it is merged over the result
//     so far.
//
// Fetch settings start as cfg's and carry on from fetch to fetch, as the
// reference's single fetcher does. Render does no I/O itself: load does.
func Render(cfg Config, load Loader) (Config, error) {
	result, _, err := render(cfg, cfg, load, 0)
	return result, err
}

func render(cfg, settings Config, load Loader, depth int) (Config, Config, error) {
	if depth > MaxRenderDepth {
		return Config{}, settings, fmt.Errorf("%w (more than %d levels)", ErrRenderDepth, MaxRenderDepth)
	}
	if replace := cfg.Ignition.Config.Replace; replace.Source != nil {
		next, err := load(settings, replace)
		if err != nil {
			return Config{}, settings, fmt.Errorf("ignition.config.replace %s: %w", DescribeURL(*replace.Source), err)
		}
		return render(next, next, load, depth+1)
	}
	result := cfg
	for i, res := range cfg.Ignition.Config.Merge {
		if deref(res.Source) == "" {
			// Valid in spec 3.0.0 (Validate), it still names nothing to
			// merge: Ignition fails the same way when it fetches it
			// (coreos/ignition internal/exec/engine.go,
			// fetchReferencedConfig).
			return Config{}, settings, fmt.Errorf("ignition.config.merge.%d: %w", i, ErrSourceRequired)
		}
		child, err := load(settings, res)
		if err != nil {
			return Config{}, settings, fmt.Errorf("ignition.config.merge.%d %s: %w", i, DescribeURL(deref(res.Source)), err)
		}
		// The new config's timeouts, proxy and CAs apply to the configs it
		// names in turn.
		settings = Merge(result, child)
		child, settings, err = render(child, settings, load, depth+1)
		if err != nil {
			return Config{}, settings, fmt.Errorf("ignition.config.merge.%d %s: %w", i, DescribeURL(deref(res.Source)), err)
		}
		result = Merge(result, child)
	}
	return result, settings, nil
}
