package wirecert

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// opensslCmd runs openssl in dir and fails the test when it fails; the
// test is skipped where openssl is missing (the fixed vector in testdata
// still runs).
func opensslCmd(t testing.TB, dir string, args ...string) {
	t.Helper()
	path, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not found: the vectors made at test time need it (apt-get install openssl)")
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// readKeyFile returns the RSA private key in a PKCS#8 PEM file.
func readKeyFile(t testing.TB, path string) *rsa.PrivateKey {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return k.(*rsa.PrivateKey)
}

// readFile returns a file's contents or fails the test.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The fixed vector, made once by openssl 3.0 (see the commit that added
// it): certificates.der is `openssl cms -encrypt -binary -des3` to the
// key recipient.key of a PFX (`openssl pkcs12 -legacy -export -nokeys
// -certpbe PBE-SHA1-RC2-40 -passout pass:`) holding an RSA, a P-256 and
// another RSA certificate; certificates.keys is `ssh-keygen -i -m PKCS8`
// of the two RSA public keys. The key is a test key and nothing else.
func TestFixedVector(t *testing.T) {
	r := &Recipient{Key: readKeyFile(t, "testdata/recipient.key")}
	keys, skipped, err := r.SSHKeys(readFile(t, "testdata/certificates.der"))
	if err != nil {
		t.Fatalf("SSHKeys() = %v", err)
	}
	want := strings.Split(strings.TrimSpace(string(readFile(t, "testdata/certificates.keys"))), "\n")
	if !slices.Equal(keys, want) {
		t.Errorf("SSHKeys() =\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if skipped != 1 {
		t.Errorf("SSHKeys() skipped %d certificates, want 1 (the P-256 one)", skipped)
	}
}

// makeCerts writes n RSA certificates (cert<i>.pem) and their keys to dir
// and returns their keys in ssh-keygen's authorized_keys form.
func makeCerts(t testing.TB, dir string, n int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		name := filepath.Join(dir, "cert"+string(rune('0'+i)))
		opensslCmd(t, dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name+".key", "-out", name+".pem", "-subj", "/CN=ssh", "-days", "2")
		opensslCmd(t, dir, "x509", "-in", name+".pem", "-pubkey", "-noout", "-out", name+".pub")
		keys = append(keys, sshKeygenImport(t, name+".pub"))
	}
	return keys
}

// sshKeygenImport returns ssh-keygen's authorized_keys line of a PEM
// public key; without ssh-keygen, our own (then only the other checks
// of the test hold).
func sshKeygenImport(t testing.TB, pubPEM string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		b, _ := pem.Decode(readFile(t, pubPEM))
		pub, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return AuthorizedKey(pub.(*rsa.PublicKey))
	}
	out, err := exec.Command("ssh-keygen", "-i", "-m", "PKCS8", "-f", pubPEM).Output()
	if err != nil {
		t.Fatalf("ssh-keygen -i %s: %v", pubPEM, err)
	}
	return strings.TrimSpace(string(out))
}

func TestPFXCertificates(t *testing.T) {
	dir := t.TempDir()
	makeCerts(t, dir, 2)
	opensslCmd(t, dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "own.key", "-out", "own.pem", "-subj", "/CN=own", "-days", "2")
	all := readFile(t, filepath.Join(dir, "cert0.pem"))
	all = append(all, readFile(t, filepath.Join(dir, "cert1.pem"))...)
	if err := os.WriteFile(filepath.Join(dir, "all.pem"), all, 0o600); err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for _, f := range []string{"cert0.pem", "cert1.pem"} {
		b, _ := pem.Decode(readFile(t, filepath.Join(dir, f)))
		want = append(want, b.Bytes)
	}
	for name, tc := range map[string]struct {
		args     []string
		password string
	}{
		"rc2-40, empty password":  {[]string{"-legacy", "-nokeys", "-certpbe", "PBE-SHA1-RC2-40", "-passout", "pass:"}, ""},
		"3des, empty password":    {[]string{"-nokeys", "-certpbe", "PBE-SHA1-3DES", "-passout", "pass:"}, ""},
		"3des, password":          {[]string{"-nokeys", "-certpbe", "PBE-SHA1-3DES", "-passout", "pass:pässwört"}, "pässwört"},
		"rc2-40, password":        {[]string{"-legacy", "-nokeys", "-certpbe", "PBE-SHA1-RC2-40", "-passout", "pass:secret"}, "secret"},
		"not encrypted":           {[]string{"-nokeys", "-certpbe", "NONE", "-passout", "pass:"}, ""},
		"with a shrouded key bag": {[]string{"-legacy", "-inkey", "own.key", "-certpbe", "PBE-SHA1-RC2-40", "-keypbe", "PBE-SHA1-3DES", "-passout", "pass:"}, ""},
		"many iterations, 3des":   {[]string{"-nokeys", "-certpbe", "PBE-SHA1-3DES", "-iter", "10000", "-passout", "pass:"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"pkcs12", "-export", "-in", "all.pem", "-out", "out.pfx"}, tc.args...)
			if slices.Contains(tc.args, "own.key") {
				// The key's own certificate comes first in the PFX.
				args = append([]string{"pkcs12", "-export", "-in", "own.pem", "-certfile", "all.pem", "-out", "out.pfx"}, tc.args...)
			}
			opensslCmd(t, dir, args...)
			got, err := PFXCertificates(readFile(t, filepath.Join(dir, "out.pfx")), tc.password)
			if err != nil {
				t.Fatalf("PFXCertificates() = %v", err)
			}
			if slices.Contains(tc.args, "own.key") {
				got = slices.DeleteFunc(got, func(der []byte) bool {
					c, err := x509.ParseCertificate(der)
					return err == nil && c.Subject.CommonName == "own"
				})
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("PFXCertificates() returned %d certificates, want the %d given to openssl", len(got), len(want))
			}
		})
	}

	t.Run("wrong password", func(t *testing.T) {
		opensslCmd(t, dir, "pkcs12", "-export", "-in", "all.pem", "-out", "pw.pfx", "-nokeys", "-certpbe", "PBE-SHA1-3DES", "-passout", "pass:right")
		_, err := PFXCertificates(readFile(t, filepath.Join(dir, "pw.pfx")), "wrong")
		if !errors.Is(err, ErrDecrypt) && !errors.Is(err, ErrFormat) {
			t.Errorf("PFXCertificates(wrong password) = %v, want ErrDecrypt or ErrFormat", err)
		}
	})
	t.Run("PBES2 is refused by name", func(t *testing.T) {
		opensslCmd(t, dir, "pkcs12", "-export", "-in", "all.pem", "-out", "aes.pfx", "-nokeys", "-passout", "pass:")
		if _, err := PFXCertificates(readFile(t, filepath.Join(dir, "aes.pfx")), ""); !errors.Is(err, ErrUnsupported) {
			t.Errorf("PFXCertificates(AES) = %v, want ErrUnsupported", err)
		}
	})
}

// An envelope whose encrypted content key was damaged (or made for
// another key) is refused with ErrDecrypt every time. With implicit
// rejection (a random content key on bad PKCS#1 padding) about one try in
// 256 got past the CBC padding check and returned garbage; 1500 tries
// found that with a probability above 99%.
func TestDamagedContentKeyAlwaysRefused(t *testing.T) {
	key := readKeyFile(t, "testdata/recipient.key")
	data := readFile(t, "testdata/fuzz/FuzzDecryptEnvelopedData/damaged-content-key")
	data = fuzzSeedBytes(t, data)
	for i := range 1500 {
		if _, err := DecryptEnvelopedData(key, data); !errors.Is(err, ErrDecrypt) {
			t.Fatalf("try %d: DecryptEnvelopedData(damaged content key) = %v, want ErrDecrypt", i, err)
		}
	}
}

// fuzzSeedBytes returns the []byte value of a one-value corpus file
// ("go test fuzz v1" then []byte("...")).
func fuzzSeedBytes(t *testing.T, file []byte) []byte {
	t.Helper()
	_, lit, ok := strings.Cut(string(file), "[]byte(")
	if !ok {
		t.Fatalf("corpus file holds no []byte value")
	}
	v, err := strconv.Unquote(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(lit), ")")))
	if err != nil {
		t.Fatalf("corpus file: %v", err)
	}
	return []byte(v)
}

// The whole exchange with a fresh recipient, as the agent makes it: the
// certificate the agent would send encrypts, openssl envelopes.
func TestRecipientSSHKeys(t *testing.T) {
	dir := t.TempDir()
	want := makeCerts(t, dir, 2)
	r, err := NewRecipient()
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	r.AddHeaders(h)
	if v := h.Get("x-ms-cipher-name"); v != "DES_EDE3_CBC" {
		t.Errorf("x-ms-cipher-name = %q", v)
	}
	der, err := base64.StdEncoding.DecodeString(h.Get("x-ms-guest-agent-public-x509-cert"))
	if err != nil {
		t.Fatalf("x-ms-guest-agent-public-x509-cert is not base64: %v", err)
	}
	writePEM(t, filepath.Join(dir, "transport.pem"), "CERTIFICATE", der)
	all := append(readFile(t, filepath.Join(dir, "cert0.pem")), readFile(t, filepath.Join(dir, "cert1.pem"))...)
	if err := os.WriteFile(filepath.Join(dir, "all.pem"), all, 0o600); err != nil {
		t.Fatal(err)
	}
	opensslCmd(t, dir, "pkcs12", "-legacy", "-export", "-nokeys", "-in", "all.pem", "-certpbe", "PBE-SHA1-RC2-40", "-passout", "pass:", "-out", "certs.pfx")
	opensslCmd(t, dir, "cms", "-encrypt", "-binary", "-des3", "-outform", "DER", "-in", "certs.pfx", "-out", "env.der", "transport.pem")
	keys, skipped, err := r.SSHKeys(readFile(t, filepath.Join(dir, "env.der")))
	if err != nil {
		t.Fatalf("SSHKeys() = %v", err)
	}
	if !slices.Equal(keys, want) || skipped != 0 {
		t.Errorf("SSHKeys() = %q (skipped %d), want %q", keys, skipped, want)
	}

	t.Run("another recipient cannot read it", func(t *testing.T) {
		other, err := NewRecipient()
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.SSHKeys(readFile(t, filepath.Join(dir, "env.der"))); !errors.Is(err, ErrDecrypt) {
			t.Errorf("SSHKeys(other key) = %v, want ErrDecrypt", err)
		}
	})
	t.Run("AES content is refused by name", func(t *testing.T) {
		opensslCmd(t, dir, "cms", "-encrypt", "-binary", "-aes256", "-outform", "DER", "-in", "certs.pfx", "-out", "aes.der", "transport.pem")
		if _, _, err := r.SSHKeys(readFile(t, filepath.Join(dir, "aes.der"))); !errors.Is(err, ErrUnsupported) {
			t.Errorf("SSHKeys(AES) = %v, want ErrUnsupported", err)
		}
	})
	t.Run("not CMS", func(t *testing.T) {
		if _, _, err := r.SSHKeys([]byte("<html>")); !errors.Is(err, ErrFormat) {
			t.Errorf("SSHKeys(garbage) = %v, want ErrFormat", err)
		}
	})
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The key derivation against RFC 7292's behaviour as openssl implements
// it: `openssl kdf`-free, so checked through a known PKCS#12 vector:
// password "smeg", salt 0a58cf64530d823f, 1 iteration (the vector
// published with OpenSSL's and Go's PKCS#12 tests).
func TestPKCS12KDF(t *testing.T) {
	salt := []byte{0x0a, 0x58, 0xcf, 0x64, 0x53, 0x0d, 0x82, 0x3f}
	got := pkcs12KDF(bmpString("smeg"), salt, 1, 1, 24)
	want := []byte{0x8a, 0xaa, 0xe6, 0x29, 0x7b, 0x6c, 0xb0, 0x46, 0x42, 0xab, 0x5b, 0x07, 0x78, 0x51, 0x28, 0x4e, 0xb7, 0x12, 0x8f, 0x1a, 0x2a, 0x7f, 0xbc, 0xa3}
	if !slices.Equal(got, want) {
		t.Errorf("pkcs12KDF(smeg) = %x, want %x", got, want)
	}
}

func TestBMPString(t *testing.T) {
	if got := bmpString(""); !slices.Equal(got, []byte{0, 0}) {
		t.Errorf(`bmpString("") = %x, want 0000`, got)
	}
	if got := bmpString("aé"); !slices.Equal(got, []byte{0, 'a', 0, 0xe9, 0, 0}) {
		t.Errorf(`bmpString("aé") = %x`, got)
	}
	// U+1F511 is the surrogate pair D83D DD11.
	if got := bmpString("\U0001F511"); !slices.Equal(got, []byte{0xd8, 0x3d, 0xdd, 0x11, 0, 0}) {
		t.Errorf(`bmpString(U+1F511) = %x, want d83ddd110000`, got)
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var out []byte
	for i := 0; i+1 < len(s); i += 2 {
		var b byte
		for _, c := range s[i : i+2] {
			switch {
			case c >= '0' && c <= '9':
				b = b<<4 | byte(c-'0')
			case c >= 'a' && c <= 'f':
				b = b<<4 | byte(c-'a'+10)
			default:
				t.Fatalf("bad hex %q", s)
			}
		}
		out = append(out, b)
	}
	return out
}

// The ssh-rsa form of a key against ssh-keygen's (testdata, made once),
// including a modulus whose top bit needs mpint's leading zero.
func TestAuthorizedKey(t *testing.T) {
	want := strings.Split(strings.TrimSpace(string(readFile(t, "testdata/certificates.keys"))), "\n")[0]
	blob, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(want, "ssh-rsa "))
	if err != nil {
		t.Fatal(err)
	}
	// Rebuild the public key from ssh-keygen's blob and encode it again.
	pub := &rsa.PublicKey{}
	rd := func() []byte {
		n := int(blob[0])<<24 | int(blob[1])<<16 | int(blob[2])<<8 | int(blob[3])
		v := blob[4 : 4+n]
		blob = blob[4+n:]
		return v
	}
	if string(rd()) != "ssh-rsa" {
		t.Fatal("testdata key is not ssh-rsa")
	}
	e := rd()
	for _, b := range e {
		pub.E = pub.E<<8 | int(b)
	}
	pub.N = new(big.Int).SetBytes(rd())
	if got := AuthorizedKey(pub); got != want {
		t.Errorf("AuthorizedKey() =\n%s\nwant\n%s", got, want)
	}
}

// The hand-written certificate is one crypto/x509 and openssl read, and
// its signature verifies with its own key.
func TestSelfSigned(t *testing.T) {
	r, err := NewRecipient()
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(r.Cert)
	if err != nil {
		t.Fatalf("ParseCertificate(transport certificate) = %v", err)
	}
	if err := c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature); err != nil {
		t.Errorf("self-signature: %v", err)
	}
	if pub, ok := c.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(&r.Key.PublicKey) {
		t.Errorf("certificate key %T is not the recipient's", c.PublicKey)
	}
	if c.Subject.CommonName != "flint transport" || c.Version != 3 || c.NotAfter.Sub(c.NotBefore) != 25*time.Hour {
		t.Errorf("certificate: subject %q, version %d, valid %v–%v", c.Subject.CommonName, c.Version, c.NotBefore, c.NotAfter)
	}
	// GeneralizedTime from 2050 on.
	late, err := selfSigned(r.Key, time.Date(2050, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := x509.ParseCertificate(late); err != nil || c.NotBefore.Year() != 2050 {
		t.Errorf("certificate of 2050: %v, %v", c, err)
	}
	dir := t.TempDir()
	writePEM(t, filepath.Join(dir, "c.pem"), "CERTIFICATE", r.Cert)
	opensslCmd(t, dir, "verify", "-CAfile", "c.pem", "-check_ss_sig", "c.pem")
}
