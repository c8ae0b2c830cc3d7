package config

import "errors"

// Sentinel errors returned by Parse, for errors.Is. The report carries the
// details.
var (
	// ErrEmpty means the input holds no config at all.
	ErrEmpty = errors.New("not a config (empty)")
	// ErrSyntax means the input is not well-formed JSON.
	ErrSyntax = errors.New("config is not valid JSON")
	// ErrInvalidVersion means ignition.version is missing or is not a
	// version number.
	ErrInvalidVersion = errors.New("invalid config version")
	// ErrUnknownVersion means ignition.version names a version flint does
	// not support.
	ErrUnknownVersion = errors.New("unsupported config version")
	// ErrInvalid means the config breaks at least one rule of its spec
	// version; the report lists every problem.
	ErrInvalid = errors.New("config is not valid")
	// ErrTooLarge means a config is larger than the size limit it was read
	// with (CheckSize): flint refuses it rather than parse it.
	ErrTooLarge = errors.New("config is too large")
	// ErrSourceRequired means a config to merge has no source: spec 3.0.0
	// validates such an entry, but there is nothing to fetch (Render).
	ErrSourceRequired = errors.New("source is required")
	// ErrBadSize means a size limit is not a positive whole number with an
	// optional K, M or G (ParseSize).
	ErrBadSize = errors.New("not a size: use a number of bytes with an optional K, M or G, such as 128M")
)
