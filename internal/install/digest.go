package install

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// Digest is an expected sha256 or sha512 digest, written "sha256-HEX" as
// --ignition-hash and --image-hash take it (coreos-installer,
// src/io/hash.rs, IgnitionHash).
type Digest struct {
	Algo string // "sha256" or "sha512"
	Sum  []byte
}

// ParseDigest reads "sha256-HEX" or "sha512-HEX".
func ParseDigest(s string) (Digest, error) {
	algo, hexSum, ok := strings.Cut(s, "-")
	if !ok || algo == "" || hexSum == "" {
		return Digest{}, fmt.Errorf("%q is not ALGO-HEX (sha256-… or sha512-…)", s)
	}
	var size int
	switch algo {
	case "sha256":
		size = sha256.Size
	case "sha512":
		size = sha512.Size
	default:
		return Digest{}, fmt.Errorf("%q: unknown hash type %q (sha256 or sha512)", s, algo)
	}
	sum, err := hex.DecodeString(hexSum)
	if err != nil || len(sum) != size {
		return Digest{}, fmt.Errorf("%q: not %d hex digits of %s", s, 2*size, algo)
	}
	return Digest{Algo: algo, Sum: sum}, nil
}

// New returns a hash of the digest's algorithm.
func (d Digest) New() hash.Hash {
	if d.Algo == "sha512" {
		return sha512.New()
	}
	return sha256.New()
}

// String is the "ALGO-HEX" form.
func (d Digest) String() string { return d.Algo + "-" + hex.EncodeToString(d.Sum) }

// Check compares a computed sum with the expected one.
func (d Digest) Check(got []byte) error {
	if string(got) != string(d.Sum) {
		return fmt.Errorf("%w: want %s, got %s-%s", ErrDigestMismatch, d, d.Algo, hex.EncodeToString(got))
	}
	return nil
}
