package spec2

import "errors"

// Sentinel errors returned by Translate, for errors.Is. The entries carry the
// details.
var (
	// ErrVersion means ignition.version is a 2.x version that was never
	// released (2.0.0 to 2.4.0, and 2.4.0-experimental).
	ErrVersion = errors.New("unsupported spec 2.x version")
	// ErrInvalid means the config breaks a rule of its 2.x spec or holds
	// something spec 3.x cannot express.
	ErrInvalid = errors.New("spec 2.x config cannot be translated")
)
