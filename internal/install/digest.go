package install

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/flintboot/flint/config"
)

// Digest is an expected sha256 or sha512 digest, written "sha256-HEX" as
// --ignition-hash and --image-hash take it (coreos-installer,
// src/io/hash.rs, IgnitionHash): the config's verification hash, read by
// the config library's one parser.
type Digest struct{ config.Hash }

// ParseDigest reads "sha256-HEX" or "sha512-HEX".
func ParseDigest(s string) (Digest, error) {
	h, err := config.ParseHash(s)
	switch {
	case errors.Is(err, config.ErrHashForm):
		return Digest{}, fmt.Errorf("%q is not ALGO-HEX (sha256-… or sha512-…)", s)
	case errors.Is(err, config.ErrHashFunction):
		return Digest{}, fmt.Errorf("%q: unknown hash type %q (sha256 or sha512)", s, h.Function)
	case err != nil:
		return Digest{}, fmt.Errorf("%q: not %d hex digits of %s", s, h.Digits(), h.Function)
	}
	return Digest{h}, nil
}

// Check compares a computed sum with the expected one.
func (d Digest) Check(got []byte) error {
	if string(got) != string(d.Sum) {
		return fmt.Errorf("%w: want %s, got %s-%s", ErrDigestMismatch, d, d.Function, hex.EncodeToString(got))
	}
	return nil
}
