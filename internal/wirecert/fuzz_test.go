package wirecert

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The PFX seeds in testdata/pfx were made once by openssl 3.0 from two
// throw-away self-signed RSA certificates (seed0, seed1):
//
//	openssl pkcs12 -export -legacy -nokeys -certpbe PBE-SHA1-RC2-40 -passout pass:       > rc2-40-empty.pfx
//	openssl pkcs12 -export -nokeys -certpbe PBE-SHA1-3DES -passout pass:secret           > 3des-secret.pfx
//	openssl pkcs12 -export -nokeys -certpbe NONE -passout pass:                          > plain.pfx
//	openssl pkcs12 -export -legacy -inkey c0.key -certpbe PBE-SHA1-RC2-40 -keypbe PBE-SHA1-3DES -passout pass: > keybag.pfx
var pfxSeeds = map[string]string{
	"rc2-40-empty.pfx": "",
	"3des-secret.pfx":  "secret",
	"plain.pfx":        "",
	"keybag.pfx":       "",
}

// checkClassified fails the test when err wraps none of the package's
// sentinels: every way untrusted input can be refused has a class the
// agent's caller can act on.
func checkClassified(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrDecrypt) {
		t.Errorf("%s = %v, which wraps none of ErrFormat, ErrUnsupported, ErrDecrypt", what, err)
	}
}

// opensslPath returns openssl's path, or "" where it is missing (the
// fuzz targets then check only the properties that need no oracle).
func opensslPath() string {
	p, err := exec.LookPath("openssl")
	if err != nil {
		return ""
	}
	return p
}

// opensslOut runs openssl with stdin and returns its standard output, or
// the error with its standard error.
func opensslOut(path string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command(path, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New(err.Error() + ": " + strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// pemCertificates returns the DER of the CERTIFICATE blocks in data.
func pemCertificates(data []byte) [][]byte {
	var out [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		if b.Type == "CERTIFICATE" {
			out = append(out, b.Bytes)
		}
	}
}

// FuzzDecryptEnvelopedData feeds arbitrary bytes, seeded with the
// WireServer vector, to the CMS decryption with the vector's key. Every
// refusal is classified; a second call answers the same; what it returns
// is shorter than its input; and what it decrypts, openssl's CMS
// decrypts to the same bytes.
func FuzzDecryptEnvelopedData(f *testing.F) {
	key := readKeyFile(f, "testdata/recipient.key")
	f.Add(readFile(f, "testdata/certificates.der"))
	openssl := opensslPath()
	dir := f.TempDir()
	keyFile := mustAbs(f, "testdata/recipient.key")
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := DecryptEnvelopedData(key, data)
		// The same input and key give the same answer: no randomness
		// may decide between content and refusal.
		again, errAgain := DecryptEnvelopedData(key, data)
		if (err == nil) != (errAgain == nil) || !bytes.Equal(out, again) {
			t.Fatalf("DecryptEnvelopedData twice = (%d bytes, %v) then (%d bytes, %v)", len(out), err, len(again), errAgain)
		}
		if err != nil {
			checkClassified(t, "DecryptEnvelopedData", err)
			return
		}
		if len(out) >= len(data) {
			t.Fatalf("DecryptEnvelopedData returned %d bytes from %d of input", len(out), len(data))
		}
		if openssl == "" {
			return
		}
		in := filepath.Join(dir, "in.der")
		if err := os.WriteFile(in, data, 0o600); err != nil {
			t.Fatal(err)
		}
		want, err := opensslOut(openssl, nil, "cms", "-decrypt", "-binary", "-inform", "DER", "-in", in, "-inkey", keyFile)
		if err != nil {
			t.Fatalf("DecryptEnvelopedData accepted what openssl cms -decrypt refuses: %v", err)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("DecryptEnvelopedData = %d bytes, openssl cms -decrypt = %d bytes (equal: false)", len(out), len(want))
		}
	})
}

// FuzzPFXCertificates feeds arbitrary bytes and passwords, seeded with
// PFX files openssl made, to the PKCS#12 reader. Every refusal is
// classified; the certificates it returns fit in its input; and when it
// succeeds, openssl pkcs12 (MAC check off: the reader does not check it
// either) finds the same certificates, in the same order — where every
// certificate returned is one Go's X.509 parser reads, since openssl
// parses each bag's certificate and the reader hands them on unparsed.
func FuzzPFXCertificates(f *testing.F) {
	for name, pw := range pfxSeeds {
		f.Add(readFile(f, filepath.Join("testdata/pfx", name)), pw)
	}
	openssl := opensslPath()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		certs, err := PFXCertificates(data, password)
		if err != nil {
			checkClassified(t, "PFXCertificates", err)
			return
		}
		total := 0
		for _, c := range certs {
			total += len(c)
		}
		if total > len(data) {
			t.Fatalf("PFXCertificates returned %d bytes of certificates from %d of input", total, len(data))
		}
		if openssl == "" || strings.ContainsRune(password, 0) || !utf8.ValidString(password) {
			return
		}
		for _, c := range certs {
			if _, err := x509.ParseCertificate(c); err != nil {
				return
			}
		}
		in := filepath.Join(dir, "in.pfx")
		if err := os.WriteFile(in, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := opensslOut(openssl, nil, "pkcs12", "-legacy", "-nokeys", "-nomacver", "-in", in, "-passin", "pass:"+password)
		if err != nil {
			t.Fatalf("PFXCertificates accepted what openssl pkcs12 refuses: %v", err)
		}
		if want := pemCertificates(out); !slices.EqualFunc(certs, want, bytes.Equal) {
			t.Fatalf("PFXCertificates = %d certificates, openssl pkcs12 = %d (or different ones)", len(certs), len(want))
		}
	})
}

// FuzzOpenSSLEnvelope has openssl make what WireServer makes — a CMS
// EnvelopedData, 3DES content, RSA key transport to the recipient — of
// fuzzed content, and checks the decryption returns that content: DER
// length forms, padding of every length, empty content.
func FuzzOpenSSLEnvelope(f *testing.F) {
	openssl := opensslPath()
	if openssl == "" {
		f.Skip("openssl not found: this target checks the decryption against what openssl makes (apt-get install openssl)")
	}
	key := readKeyFile(f, "testdata/recipient.key")
	dir := f.TempDir()
	opensslCmd(f, dir, "req", "-x509", "-new", "-key", mustAbs(f, "testdata/recipient.key"), "-out", "recipient.pem", "-subj", "/CN=recipient", "-days", "2")
	cert := filepath.Join(dir, "recipient.pem")
	f.Add([]byte{})
	f.Add([]byte("x"))
	f.Add(bytes.Repeat([]byte{8}, 8))
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 9))
	f.Fuzz(func(t *testing.T, content []byte) {
		env, err := opensslOut(openssl, content, "cms", "-encrypt", "-binary", "-des3", "-outform", "DER", cert)
		if err != nil {
			t.Fatalf("openssl cms -encrypt: %v", err)
		}
		got, err := DecryptEnvelopedData(key, env)
		if err != nil {
			t.Fatalf("DecryptEnvelopedData(openssl's envelope of %d bytes) = %v", len(content), err)
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("DecryptEnvelopedData(openssl's envelope of %d bytes) = %d bytes, not the content", len(content), len(got))
		}
	})
}

// FuzzOpenSSLPFX has openssl make PFX files of fuzzed password, PBE
// algorithm, iteration count and number of certificates, and checks the
// reader returns exactly the certificates given to openssl.
func FuzzOpenSSLPFX(f *testing.F) {
	openssl := opensslPath()
	if openssl == "" {
		f.Skip("openssl not found: this target checks the reader against what openssl makes (apt-get install openssl)")
	}
	dir := f.TempDir()
	makeCerts(f, dir, 3)
	var pems [][]byte
	var ders [][]byte
	for i := range 3 {
		p := readFile(f, filepath.Join(dir, "cert"+string(rune('0'+i))+".pem"))
		b, _ := pem.Decode(p)
		pems, ders = append(pems, p), append(ders, b.Bytes)
	}
	f.Add("", uint8(0), uint16(1), uint8(1))
	f.Add("secret", uint8(1), uint16(2048), uint8(2))
	f.Add("pässwört", uint8(2), uint16(2000), uint8(3))
	f.Fuzz(func(t *testing.T, password string, alg uint8, iter uint16, n uint8) {
		// Made into one openssl's command line can take: valid UTF-8,
		// no NUL, not too long.
		password = strings.ReplaceAll(strings.ToValidUTF8(password, "\uFFFD"), "\x00", "0")
		if len(password) > 256 {
			password = strings.ToValidUTF8(password[:256], "")
		}
		pbe := []string{"PBE-SHA1-RC2-40", "PBE-SHA1-3DES", "NONE"}[int(alg)%3]
		count := 1 + int(n)%3
		iterations := 1 + int(iter)%4096
		in := bytes.Join(pems[:count], nil)
		out, err := opensslOut(openssl, in, "pkcs12", "-export", "-legacy", "-nokeys", "-certpbe", pbe,
			"-iter", strconv.Itoa(iterations), "-passout", "pass:"+password)
		if err != nil {
			t.Fatalf("openssl pkcs12 -export: %v", err)
		}
		got, err := PFXCertificates(out, password)
		if err != nil {
			t.Fatalf("PFXCertificates(openssl %s, %d iterations, %d certificates, %d-byte password) = %v", pbe, iterations, count, len(password), err)
		}
		if !slices.EqualFunc(got, ders[:count], bytes.Equal) {
			t.Fatalf("PFXCertificates(openssl %s, %d iterations) = %d certificates, want the %d given", pbe, iterations, len(got), count)
		}
	})
}

func mustAbs(t testing.TB, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// withEncryptedPartTimes returns the PFX der with its encryptedData part
// repeated n times in the authenticated safe (the MAC, which the reader
// does not check, is dropped): the shape of a PFX that asks for a key
// derivation per part.
func withEncryptedPartTimes(t testing.TB, der []byte, n int) []byte {
	t.Helper()
	var p pfx
	if err := unmarshal(der, &p, "PFX"); err != nil {
		t.Fatal(err)
	}
	authSafe, err := octets(p.AuthSafe.Content.Bytes, "authSafe")
	if err != nil {
		t.Fatal(err)
	}
	var safes []contentInfo
	if err := unmarshal(authSafe, &safes, "authSafe"); err != nil {
		t.Fatal(err)
	}
	var parts []contentInfo
	for _, ci := range safes {
		if ci.ContentType.Equal(oidEncryptedData) {
			for range n {
				parts = append(parts, ci)
			}
		}
	}
	if len(parts) == 0 {
		t.Fatal("the PFX has no encryptedData part")
	}
	inner, err := asn1.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	octet, err := asn1.Marshal(inner)
	if err != nil {
		t.Fatal(err)
	}
	out, err := asn1.Marshal(struct {
		Version  int
		AuthSafe contentInfo
	}{3, contentInfo{ContentType: oidData, Content: asn1.RawValue{FullBytes: mustExplicit0(t, octet)}}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustExplicit0 wraps an element in a context-specific constructed [0].
func mustExplicit0(t testing.TB, elem []byte) []byte {
	t.Helper()
	b, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: elem})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The key derivation's work is bounded per PFX, not only per part: parts
// of many iterations each, which WireServer's answer could repeat as often
// as its size allows, are refused before the derivation runs.
func TestPFXIterationBudget(t *testing.T) {
	dir := t.TempDir()
	makeCerts(t, dir, 1)
	opensslCmd(t, dir, "pkcs12", "-export", "-nokeys", "-in", "cert0.pem", "-certpbe", "PBE-SHA1-3DES", "-iter", "400000", "-passout", "pass:", "-out", "heavy.pfx")
	heavy := readFile(t, filepath.Join(dir, "heavy.pfx"))

	if certs, err := PFXCertificates(heavy, ""); err != nil || len(certs) != 1 {
		t.Fatalf("PFXCertificates(one part, 400000 iterations) = %d certificates, %v; want 1", len(certs), err)
	}
	if certs, err := PFXCertificates(withEncryptedPartTimes(t, heavy, 2), ""); err != nil || len(certs) != 2 {
		t.Fatalf("PFXCertificates(two parts, 800000 iterations) = %d certificates, %v; want 2", len(certs), err)
	}
	start := time.Now()
	_, err := PFXCertificates(withEncryptedPartTimes(t, heavy, 40), "")
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("PFXCertificates(40 parts of 400000 iterations) = %v, want ErrUnsupported", err)
	}
	t.Logf("40 parts of 400000 iterations refused after %v", time.Since(start))
}
