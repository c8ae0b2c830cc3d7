package wirecert

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"
	"net/http"
	"time"
)

// Recipient is the throw-away key and self-signed certificate WireServer
// encrypts the certificates to. It lives for one request and is never
// written anywhere.
type Recipient struct {
	Key *rsa.PrivateKey
	// Cert is the certificate's DER.
	Cert []byte
}

// NewRecipient makes a 2048-bit RSA key and a self-signed certificate
// for it, valid for a day (WireServer only reads the public key).
func NewRecipient() (*Recipient, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("transport key: %w", err)
	}
	der, err := selfSigned(key, time.Now())
	if err != nil {
		return nil, fmt.Errorf("transport certificate: %w", err)
	}
	return &Recipient{Key: key, Cert: der}, nil
}

// selfSigned returns a minimal X.509 v3 certificate (RFC 5280 §4.1) for
// key, signed by it with sha256WithRSAEncryption, valid from an hour
// before now to a day after. It is written by hand: x509.CreateCertificate
// and the reflection of asn1.Marshal would cost the binary 60 KB for one
// fixed structure.
func selfSigned(key *rsa.PrivateKey, now time.Time) ([]byte, error) {
	serial := make([]byte, 8)
	if _, err := rand.Read(serial); err != nil {
		return nil, err
	}
	serial[0] &= 0x7f // positive
	sha256RSA := der(0x30, der(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b}), der(0x05))
	rsaEncryption := der(0x30, der(0x06, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01}), der(0x05))
	name := der(0x30, der(0x31, der(0x30, der(0x06, []byte{0x55, 0x04, 0x03}), der(0x0c, []byte("flint transport")))))
	pub := der(0x30, derInt(key.N.Bytes()), derInt(big.NewInt(int64(key.E)).Bytes()))
	tbs := der(0x30,
		der(0xa0, der(0x02, []byte{2})), // version v3
		derInt(serial),
		sha256RSA,
		name,
		der(0x30, derTime(now.Add(-time.Hour)), derTime(now.Add(24*time.Hour))),
		name,
		der(0x30, rsaEncryption, der(0x03, []byte{0}, pub)),
	)
	digest := sha256.Sum256(tbs)
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:])
	if err != nil {
		return nil, err
	}
	return der(0x30, tbs, sha256RSA, der(0x03, []byte{0}, sig)), nil
}

// der returns one DER element: tag, definite length, then the parts of
// its content. Not inlined: a copy at each of its 20 calls would cost the
// binary 10 KB.
//
//go:noinline
func der(tag byte, parts ...[]byte) []byte {
	var content []byte
	for _, p := range parts {
		content = append(content, p...)
	}
	out := []byte{tag}
	switch n := len(content); {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	default:
		out = append(out, 0x82, byte(n>>8), byte(n))
	}
	return append(out, content...)
}

// derInt is a non-negative INTEGER from its big-endian magnitude.
func derInt(b []byte) []byte {
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return der(0x02, b)
}

// derTime is RFC 5280 §4.1.2.5's Time: UTCTime through 2049, then
// GeneralizedTime.
func derTime(t time.Time) []byte {
	t = t.UTC()
	if t.Year() < 2050 {
		return der(0x17, []byte(t.Format("060102150405Z")))
	}
	return der(0x18, []byte(t.Format("20060102150405Z")))
}

// CipherName is the content encryption asked of WireServer, the one
// DecryptEnvelopedData implements.
const CipherName = "DES_EDE3_CBC"

// AddHeaders adds to h what the certificates request carries besides the
// protocol headers: the cipher and the certificate (base64 of its DER,
// one line, as WALinuxAgent sends the PEM body).
func (r *Recipient) AddHeaders(h http.Header) {
	h.Set("x-ms-cipher-name", CipherName)
	h.Set("x-ms-guest-agent-public-x509-cert", base64.StdEncoding.EncodeToString(r.Cert))
}

// SSHKeys returns the authorized_keys lines of the RSA certificates in
// data, the decoded <Data> of WireServer's certificates answer: a CMS
// EnvelopedData to r holding a PFX with an empty password. Certificates
// with other key types are skipped (Azure's Linux SSH keys are RSA);
// skipped counts them.
func (r *Recipient) SSHKeys(data []byte) (keys []string, skipped int, err error) {
	plain, err := DecryptEnvelopedData(r.Key, data)
	if err != nil {
		return nil, 0, err
	}
	certs, err := PFXCertificates(plain, "")
	if err != nil {
		return nil, 0, err
	}
	for i, der := range certs {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, 0, fmt.Errorf("certificate %d: %w: %w", i, ErrFormat, err)
		}
		pub, ok := c.PublicKey.(*rsa.PublicKey)
		if !ok {
			skipped++
			continue
		}
		keys = append(keys, AuthorizedKey(pub))
	}
	return keys, skipped, nil
}

// AuthorizedKey returns pub as an authorized_keys line "ssh-rsa AAAA…":
// the base64 of RFC 4253 §6.6's key blob, string "ssh-rsa", mpint e,
// mpint n (RFC 4251 §5).
func AuthorizedKey(pub *rsa.PublicKey) string {
	var blob []byte
	str := func(b []byte) {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(b)))
		blob = append(blob, b...)
	}
	mpint := func(x *big.Int) {
		b := x.Bytes()
		if len(b) > 0 && b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		str(b)
	}
	str([]byte("ssh-rsa"))
	mpint(big.NewInt(int64(pub.E)))
	mpint(pub.N)
	return "ssh-rsa " + base64.StdEncoding.EncodeToString(blob)
}
