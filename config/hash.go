package config

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// Hash is a verification hash as the spec writes it, "<function>-<hex
// digest>" with the function sha512 or sha256 (verification.hash;
// coreos-installer's --image-hash and --ignition-hash take the same form,
// src/io/hash.rs). It is the one reader of that form: the validator, the
// fetcher and flint install all parse with ParseHash.
type Hash struct {
	// Function is "sha512" or "sha256"; after a failed ParseHash, what
	// stood before the first "-".
	Function string
	// Sum is the digest's bytes.
	Sum []byte
}

// hashSizes are the digest sizes of the functions the spec knows.
var hashSizes = map[string]int{"sha512": sha512.Size, "sha256": sha256.Size}

// ParseHash reads "sha512-HEX" or "sha256-HEX". Its errors wrap, in the
// order they are checked, ErrHashForm (no "-"), ErrHashFunction, ErrHashLength
// or ErrHashNotHex; from ErrHashFunction on, the Hash holds the function
// as written. Which function a config's version allows is the
// validator's business, not this one's.
func ParseHash(s string) (Hash, error) {
	fn, sum, ok := strings.Cut(s, "-")
	if !ok {
		return Hash{}, fmt.Errorf("%q: %w", s, ErrHashForm)
	}
	h := Hash{Function: fn}
	size, known := hashSizes[fn]
	if !known {
		return h, fmt.Errorf("%q: %w %q", s, ErrHashFunction, fn)
	}
	if len(sum) != hex.EncodedLen(size) {
		return h, fmt.Errorf("%q: %w: %s has %d hex digits, not %d", s, ErrHashLength, fn, len(sum), hex.EncodedLen(size))
	}
	b, err := hex.DecodeString(sum)
	if err != nil {
		return h, fmt.Errorf("%q: %w", s, ErrHashNotHex)
	}
	h.Sum = b
	return h, nil
}

// Digits is the number of hex digits the function's digest has (0 for a
// function the spec does not know).
func (h Hash) Digits() int { return hex.EncodedLen(hashSizes[h.Function]) }

// New returns a hash.Hash of the function (sha256 for anything but
// sha512: call it on a parsed Hash).
func (h Hash) New() hash.Hash {
	if h.Function == "sha512" {
		return sha512.New()
	}
	return sha256.New()
}

// String is the "<function>-<hex>" form.
func (h Hash) String() string { return h.Function + "-" + hex.EncodeToString(h.Sum) }
