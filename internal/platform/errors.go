package platform

import "errors"

var (
	// ErrNoConfig means the source holds no user config: an empty config.
	ErrNoConfig = errors.New("no user config provided")
	// ErrNoProvider means the machine is not on the platform, or the source
	// is not there at all; the next source is tried.
	ErrNoProvider = errors.New("config provider is not available on this machine")
	// ErrProtocol means a metadata service answered something flint cannot
	// use (a WireServer without protocol 2012-11-30, a goal state without
	// a container id).
	ErrProtocol = errors.New("unexpected answer from the metadata service")
)
