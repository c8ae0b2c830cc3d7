package install

import "errors"

// Sentinels for the failures a caller tells apart.
var (
	// ErrDigestMismatch is an image or config whose digest is not the one
	// given.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrBadSignature is an image whose OpenPGP signature does not verify
	// with the keyring.
	ErrBadSignature = errors.New("bad signature")
	// ErrUnknownKey is a signature made by a key the keyring lacks; it
	// comes wrapped in ErrBadSignature.
	ErrUnknownKey = errors.New("unknown signing key")
	// ErrUnverified is an image with neither signature nor digest, without
	// --insecure.
	ErrUnverified = errors.New("image cannot be verified")
	// ErrInvalidConfig is a config the validator rejects.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrTargetBusy is a destination that is mounted, held, swapped on or
	// a partition.
	ErrTargetBusy = errors.New("destination in use")
	// ErrNotWholeDisk is a destination that is a partition.
	ErrNotWholeDisk = errors.New("not a whole disk")
	// ErrOverlap is an image that reaches into a saved partition.
	ErrOverlap = errors.New("image overlaps a saved partition")
)
