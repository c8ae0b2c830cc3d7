package butane

import "errors"

// The sentinels Translate's error wraps.
var (
	// ErrSyntax: the input is not YAML, or not a mapping at the top.
	ErrSyntax = errors.New("butane config is not valid YAML")
	// ErrVariant: no variant, or a variant or version Butane does not know.
	ErrVariant = errors.New("unknown butane variant or version")
	// ErrInvalid: the report has errors (in the source or in the result).
	ErrInvalid = errors.New("butane config is invalid")
)
