package wirecert

import (
	"crypto/cipher"
	"crypto/des"
	"crypto/sha1"
	"encoding/asn1"
	"fmt"
	"math/big"
	"unicode/utf16"
)

// The object identifiers of RFC 7292 and RFC 5652 a PFX from WireServer
// holds.
var (
	oidData            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidEncryptedData   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
	oidCertBag         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}
	oidX509Certificate = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}
	// RFC 7292 appendix C: the PKCS#12 password-based encryptions.
	oidPBESHA3DES  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 3}
	oidPBESHARC240 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 6}
)

// algorithmIdentifier is X.509's AlgorithmIdentifier.
type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

// contentInfo is RFC 5652 §3's ContentInfo.
type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,optional,tag:0"`
}

// pfx is RFC 7292 §4's PFX; the MAC is not checked: the PFX came inside
// an EnvelopedData only this agent's key opens, and holds public data.
type pfx struct {
	Version  int
	AuthSafe contentInfo
	MacData  asn1.RawValue `asn1:"optional"`
}

// safeBag is RFC 7292 §4.2's SafeBag.
type safeBag struct {
	ID         asn1.ObjectIdentifier
	Value      asn1.RawValue `asn1:"explicit,tag:0"`
	Attributes asn1.RawValue `asn1:"optional"`
}

// certBag is RFC 7292 §4.2.3's CertBag.
type certBag struct {
	ID   asn1.ObjectIdentifier
	Data []byte `asn1:"explicit,tag:0"`
}

// encryptedData is RFC 5652 §8's EncryptedData.
type encryptedData struct {
	Version int
	Content encryptedContentInfo
}

// encryptedContentInfo is RFC 5652 §6.1's EncryptedContentInfo; the
// content is [0] IMPLICIT OCTET STRING, primitive in DER.
type encryptedContentInfo struct {
	ContentType asn1.ObjectIdentifier
	Algorithm   algorithmIdentifier
	Content     []byte `asn1:"optional,tag:0"`
}

// pbeParams is RFC 7292 appendix C's pkcs-12PbeParams.
type pbeParams struct {
	Salt       []byte
	Iterations int
}

// unmarshal decodes der into v and refuses trailing bytes.
func unmarshal(der []byte, v any, what string) error {
	rest, err := asn1.Unmarshal(der, v)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", what, ErrFormat, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("%s: %w: %d bytes after the structure", what, ErrFormat, len(rest))
	}
	return nil
}

// octets returns the content of an OCTET STRING.
func octets(raw []byte, what string) ([]byte, error) {
	var b []byte
	return b, unmarshal(raw, &b, what)
}

// maxPBEIterations bounds the key derivation work of one PFX, summed over
// its password-protected parts: Windows derives with 2000 iterations and
// openssl with 2048, and a PFX that asks for more than a million in all
// (about half a second of SHA-1) is refused before any is spent. A bound
// per part alone would let an answer repeat its parts as often as its
// size allows.
const maxPBEIterations = 1 << 20

// PFXCertificates returns the DER of every X.509 certificate in the PFX
// der, in order, decrypting password-protected parts with password (""
// for WireServer's). Private keys and other bags are skipped.
func PFXCertificates(der []byte, password string) ([][]byte, error) {
	budget := maxPBEIterations
	var p pfx
	if err := unmarshal(der, &p, "PFX"); err != nil {
		return nil, err
	}
	if p.Version != 3 || !p.AuthSafe.ContentType.Equal(oidData) {
		return nil, fmt.Errorf("PFX version %d, content %v: %w", p.Version, p.AuthSafe.ContentType, ErrFormat)
	}
	authSafe, err := octets(p.AuthSafe.Content.Bytes, "PFX authSafe")
	if err != nil {
		return nil, err
	}
	var safes []contentInfo
	if err := unmarshal(authSafe, &safes, "PFX authSafe"); err != nil {
		return nil, err
	}
	var certs [][]byte
	for i, ci := range safes {
		var contents []byte
		switch {
		case ci.ContentType.Equal(oidData):
			if contents, err = octets(ci.Content.Bytes, "PFX SafeContents"); err != nil {
				return nil, err
			}
		case ci.ContentType.Equal(oidEncryptedData):
			var ed encryptedData
			if err := unmarshal(ci.Content.Bytes, &ed, "PFX encryptedData"); err != nil {
				return nil, err
			}
			if contents, err = pbeDecrypt(ed.Content.Algorithm, password, ed.Content.Content, &budget); err != nil {
				return nil, fmt.Errorf("PFX part %d: %w", i, err)
			}
		default:
			// Public-key-protected parts (envelopedData) hold no
			// certificate WireServer sends.
			continue
		}
		var bags []safeBag
		if err := unmarshal(contents, &bags, "PFX SafeContents"); err != nil {
			return nil, err
		}
		for _, b := range bags {
			if !b.ID.Equal(oidCertBag) {
				continue
			}
			var cb certBag
			if err := unmarshal(b.Value.Bytes, &cb, "PFX certBag"); err != nil {
				return nil, err
			}
			if cb.ID.Equal(oidX509Certificate) {
				certs = append(certs, cb.Data)
			}
		}
	}
	return certs, nil
}

// pbeDecrypt decrypts data with one of RFC 7292 appendix C's
// password-based encryptions, spending its iterations from budget.
func pbeDecrypt(alg algorithmIdentifier, password string, data []byte, budget *int) ([]byte, error) {
	var keyLen int
	var newCipher func(key []byte) (cipher.Block, error)
	switch {
	case alg.Algorithm.Equal(oidPBESHA3DES):
		keyLen, newCipher = 24, des.NewTripleDESCipher
	case alg.Algorithm.Equal(oidPBESHARC240):
		keyLen, newCipher = 5, func(key []byte) (cipher.Block, error) { return newRC2(key, 40) }
	default:
		return nil, fmt.Errorf("PFX encryption %v: %w", alg.Algorithm, ErrUnsupported)
	}
	var params pbeParams
	if err := unmarshal(alg.Parameters.FullBytes, &params, "PBE parameters"); err != nil {
		return nil, err
	}
	if params.Iterations < 1 {
		return nil, fmt.Errorf("PBE iteration count %d: %w", params.Iterations, ErrFormat)
	}
	if params.Iterations > *budget {
		return nil, fmt.Errorf("PBE iteration count %d, more than the %d left of the %d one PFX may ask for: %w", params.Iterations, *budget, maxPBEIterations, ErrUnsupported)
	}
	*budget -= params.Iterations
	pw := bmpString(password)
	key := pkcs12KDF(pw, params.Salt, params.Iterations, 1, keyLen)
	iv := pkcs12KDF(pw, params.Salt, params.Iterations, 2, 8)
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	return cbcDecrypt(block, iv, data)
}

// cbcDecrypt decrypts CBC with PKCS#7 padding (RFC 5652 §6.3), checking
// the padding: a wrong key shows there.
func cbcDecrypt(block cipher.Block, iv, data []byte) ([]byte, error) {
	bs := block.BlockSize()
	if len(data) == 0 || len(data)%bs != 0 || len(iv) != bs {
		return nil, fmt.Errorf("%w: %d bytes of ciphertext, %d of IV for %d-byte blocks", ErrFormat, len(data), len(iv), bs)
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
	n := int(out[len(out)-1])
	if n == 0 || n > bs {
		return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
	}
	for _, b := range out[len(out)-n:] {
		if int(b) != n {
			return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
		}
	}
	return out[:len(out)-n], nil
}

// bmpString is a password as RFC 7292 appendix B.1 feeds it to the key
// derivation: UTF-16 big-endian with a two-byte NUL terminator (so "" is
// 00 00). A character outside the BMP becomes its surrogate pair, as
// openssl's OPENSSL_utf82uni and Windows encode it.
func bmpString(s string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u>>8), byte(u))
	}
	return append(out, 0, 0)
}

// pkcs12KDF is RFC 7292 appendix B.2 with SHA-1 (u = 20, v = 64): n
// bytes of key material of purpose id (1 key, 2 IV, 3 MAC key).
func pkcs12KDF(password, salt []byte, iterations int, id byte, n int) []byte {
	const u, v = sha1.Size, 64
	fill := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		out := make([]byte, v*((len(b)+v-1)/v))
		for i := range out {
			out[i] = b[i%len(b)]
		}
		return out
	}
	d := make([]byte, v)
	for i := range d {
		d[i] = id
	}
	in := append(fill(salt), fill(password)...)
	var out []byte
	one := big.NewInt(1)
	mod := new(big.Int).Lsh(one, v*8)
	for len(out) < n {
		h := sha1.New()
		h.Write(d)
		h.Write(in)
		a := h.Sum(nil)
		for r := 1; r < iterations; r++ {
			s := sha1.Sum(a)
			a = s[:]
		}
		out = append(out, a...)
		if len(out) >= n {
			break
		}
		// I_j = (I_j + B + 1) mod 2^(8v), B being A repeated to v bytes.
		b := new(big.Int).SetBytes(fill(a))
		b.Add(b, one)
		for j := 0; j < len(in); j += v {
			x := new(big.Int).SetBytes(in[j : j+v])
			x.Add(x, b).Mod(x, mod)
			x.FillBytes(in[j : j+v])
		}
	}
	return out[:n]
}
