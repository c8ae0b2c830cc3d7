package install

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

func TestVerifier(t *testing.T) {
	signer, err := openpgp.NewEntity("signer", "", "s@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := openpgp.NewEntity("other", "", "o@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("image "), 100000)
	var sig, armored bytes.Buffer
	if err := openpgp.DetachSign(&sig, signer, bytes.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	w, _ := armor.Encode(&armored, "PGP SIGNATURE", nil)
	w.Write(sig.Bytes())
	w.Close()
	var pub bytes.Buffer
	signer.Serialize(&pub)
	keyring, err := readKeyring(pub.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	feed := func(v *verifier, b []byte) error {
		for len(b) > 0 {
			n := min(len(b), 4096)
			if _, err := v.Write(b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}

	for name, s := range map[string][]byte{"binary": sig.Bytes(), "armored": armored.Bytes()} {
		v, err := newVerifier(nil, keyring, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := feed(v, data); err != nil {
			t.Fatalf("%s: Write = %v", name, err)
		}
		if err := v.Finish(); err != nil {
			t.Errorf("%s signature: Finish = %v", name, err)
		}
		v.Abort() // after Finish: a no-op, not a hang
	}

	// Other bytes: the check fails at the end.
	v, _ := newVerifier(nil, keyring, sig.Bytes())
	feed(v, append(bytes.Clone(data), '!'))
	if err := v.Finish(); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Finish over other bytes = %v, want ErrBadSignature", err)
	}

	// A key the keyring lacks: the first Write fails.
	v, _ = newVerifier(nil, openpgp.EntityList{other}, sig.Bytes())
	if err := feed(v, data); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Write with an unknown signer = %v, want ErrBadSignature", err)
	}
	v.Abort()

	// A digest alongside the signature: both must pass.
	dg, _ := ParseDigest("sha256-" + "00" + string(bytes.Repeat([]byte("11"), 31)))
	v, _ = newVerifier(&dg, keyring, sig.Bytes())
	feed(v, data)
	if err := v.Finish(); !errors.Is(err, ErrDigestMismatch) || errors.Is(err, ErrBadSignature) {
		t.Errorf("Finish with a good signature and a wrong digest = %v", err)
	}
}
