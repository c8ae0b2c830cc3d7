package passwd

import (
	"crypto/rand"
	"crypto/sha512"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SHA-512 crypt ("$6$"), as Ulrich Drepper's "Unix crypt using SHA-256 and
// SHA-512" specifies it (the algorithm glibc's crypt(3) implements), so a
// plaintext password from a kickstart or a cloud-config becomes a
// passwordHash every distro's shadow accepts.

const (
	cryptAlphabet   = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	cryptSaltMax    = 16 // longer salts are truncated (spec, step 2)
	cryptRoundsDef  = 5000
	cryptRoundsMin  = 1000
	cryptRoundsMax  = 999999999
	cryptSaltRandom = 16
)

// HashPassword hashes a plaintext password with SHA-512 crypt, the default
// rounds and a random 16-character salt read from rnd (crypto/rand when nil).
func HashPassword(password string, rnd io.Reader) (string, error) {
	return HashPasswordRounds(password, 0, rnd)
}

// HashPasswordRounds is HashPassword with rounds rounds, written into the
// hash as "rounds=N$" (0: the default, not written), as Afterburn hashes
// Azure's admin password with 10000.
func HashPasswordRounds(password string, rounds int, rnd io.Reader) (string, error) {
	if rounds != 0 && (rounds < cryptRoundsMin || rounds > cryptRoundsMax) {
		return "", fmt.Errorf("password hash rounds %d: want %d to %d", rounds, cryptRoundsMin, cryptRoundsMax)
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	buf := make([]byte, cryptSaltRandom)
	if _, err := io.ReadFull(rnd, buf); err != nil {
		return "", fmt.Errorf("salt for a password hash: %w", err)
	}
	salt := make([]byte, len(buf))
	for i, b := range buf {
		salt[i] = cryptAlphabet[int(b)%len(cryptAlphabet)]
	}
	setting := "$6$"
	if rounds != 0 {
		setting += fmt.Sprintf("rounds=%d$", rounds)
	}
	return SHA512Crypt(password, setting+string(salt)), nil
}

// SHA512Crypt computes crypt(3) for a "$6$[rounds=N$]salt" setting.
func SHA512Crypt(password, setting string) string {
	rest := strings.TrimPrefix(setting, "$6$")
	rounds, custom := cryptRoundsDef, false
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		if num, after, ok := strings.Cut(r, "$"); ok {
			if n, err := strconv.ParseUint(num, 10, 64); err == nil {
				rounds = int(min(max(n, cryptRoundsMin), cryptRoundsMax))
				custom, rest = true, after
			}
		}
	}
	salt, _, _ := strings.Cut(rest, "$")
	if len(salt) > cryptSaltMax {
		salt = salt[:cryptSaltMax]
	}
	p, s := []byte(password), []byte(salt)

	// Digest B: password, salt, password.
	h := sha512.New()
	h.Write(p)
	h.Write(s)
	h.Write(p)
	b := h.Sum(nil)

	// Digest A: password, salt, then B once per 64 bytes of password and
	// its remainder, then B or the password for each bit of the length.
	h.Reset()
	h.Write(p)
	h.Write(s)
	n := len(p)
	for ; n > 64; n -= 64 {
		h.Write(b)
	}
	h.Write(b[:n])
	for n = len(p); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write(b)
		} else {
			h.Write(p)
		}
	}
	a := h.Sum(nil)

	// P: the digest of the password repeated once per byte, stretched to
	// the password's length.
	h.Reset()
	for range p {
		h.Write(p)
	}
	pSeq := stretch(h.Sum(nil), len(p))

	// S: the digest of the salt repeated 16 + A[0] times, stretched to
	// the salt's length.
	h.Reset()
	for i := 0; i < 16+int(a[0]); i++ {
		h.Write(s)
	}
	sSeq := stretch(h.Sum(nil), len(s))

	c := a
	for i := range rounds {
		h.Reset()
		if i&1 != 0 {
			h.Write(pSeq)
		} else {
			h.Write(c)
		}
		if i%3 != 0 {
			h.Write(sSeq)
		}
		if i%7 != 0 {
			h.Write(pSeq)
		}
		if i&1 != 0 {
			h.Write(c)
		} else {
			h.Write(pSeq)
		}
		c = h.Sum(c[:0])
	}

	var out strings.Builder
	out.WriteString("$6$")
	if custom {
		fmt.Fprintf(&out, "rounds=%d$", rounds)
	}
	out.WriteString(salt)
	out.WriteByte('$')
	// The spec's byte order: 21 groups of three, then the last byte.
	for i := range 21 {
		x, y, z := i, i+21, i+42
		switch i % 3 {
		case 1:
			x, y, z = i+21, i+42, i
		case 2:
			x, y, z = i+42, i, i+21
		}
		b64(&out, uint(c[x])<<16|uint(c[y])<<8|uint(c[z]), 4)
	}
	b64(&out, uint(c[63]), 2)
	return out.String()
}

// stretch repeats digest to n bytes.
func stretch(digest []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, digest[:min(len(digest), n-len(out))]...)
	}
	return out
}

// b64 writes the low 6·n bits of w in crypt's base-64 alphabet, least
// significant first.
func b64(out *strings.Builder, w uint, n int) {
	for range n {
		out.WriteByte(cryptAlphabet[w&0x3f])
		w >>= 6
	}
}
