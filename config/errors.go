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
	// ErrHashForm means a verification hash is not <function>-<hex
	// digest> (ParseHash).
	ErrHashForm = errors.New("malformed hash: expected <function>-<hex digest>, e.g. sha512-…")
	// ErrHashFunction means a verification hash names a function other
	// than sha512 and sha256.
	ErrHashFunction = errors.New("unrecognized hash function")
	// ErrHashLength means a verification hash's digest has the wrong
	// number of hex digits for its function.
	ErrHashLength = errors.New("wrong digest length")
	// ErrHashNotHex means a verification hash's digest has the right
	// length but is not hexadecimal: no content can match it.
	ErrHashNotHex = errors.New("digest is not hexadecimal")
)
