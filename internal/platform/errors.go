package platform

import "errors"

var (
	// ErrNoConfig means the source holds no user config: an empty config.
	ErrNoConfig = errors.New("no user config provided")
	// ErrNoProvider means the machine is not on the platform, or the source
	// is not there at all; the next source is tried.
	ErrNoProvider = errors.New("config provider is not available on this machine")
)
