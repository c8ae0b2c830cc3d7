package install

import (
	"bytes"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// verifier checks the image file as given (the compressed bytes) while it
// streams past: a digest, an OpenPGP detached signature, or both. Write
// never fails for a bad image; Finish says whether the image was good. A
// signature from a key the keyring lacks fails the first Write, so nothing
// reaches the disk.
type verifier struct {
	digest *Digest
	hash   hash.Hash

	sigW    *io.PipeWriter
	sigDone chan error
}

// readKeyring reads an armored or binary keyring.
func readKeyring(raw []byte) (openpgp.EntityList, error) {
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("-----BEGIN")) {
		return openpgp.ReadArmoredKeyRing(bytes.NewReader(raw))
	}
	return openpgp.ReadKeyRing(bytes.NewReader(raw))
}

// dearmor returns a signature's binary packets, whether armored or not.
func dearmor(sig []byte) ([]byte, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(sig), []byte("-----BEGIN")) {
		return sig, nil
	}
	block, err := armor.Decode(bytes.NewReader(sig))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(block.Body)
}

// newVerifier starts checking. keyring and sig are nil without a
// signature; digest is nil without a hash.
func newVerifier(digest *Digest, keyring openpgp.EntityList, sig []byte) (*verifier, error) {
	v := &verifier{digest: digest}
	if digest != nil {
		v.hash = digest.New()
	}
	if sig != nil {
		bin, err := dearmor(sig)
		if err != nil {
			return nil, fmt.Errorf("reading the image signature: %w", err)
		}
		pr, pw := io.Pipe()
		v.sigW = pw
		v.sigDone = make(chan error, 1)
		go func() {
			_, err := openpgp.CheckDetachedSignature(keyring, pr, bytes.NewReader(bin), nil)
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrBadSignature, err)
			}
			// A verifier that stopped early (an unknown key) makes the
			// next Write fail with its reason.
			pr.CloseWithError(cmpErr(err, errors.New("signature check ended early")))
			v.sigDone <- err
		}()
	}
	return v, nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// Write feeds the image's bytes to the checks.
func (v *verifier) Write(p []byte) (int, error) {
	if v.hash != nil {
		v.hash.Write(p)
	}
	if v.sigW != nil {
		if _, err := v.sigW.Write(p); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Finish ends the image and reports whether every check passed.
func (v *verifier) Finish() error {
	var errs []error
	if v.sigW != nil {
		v.sigW.Close()
		if err := <-v.sigDone; err != nil {
			errs = append(errs, fmt.Errorf("image signature: %w", err))
		}
		v.sigW = nil
	}
	if v.hash != nil {
		if err := v.digest.Check(v.hash.Sum(nil)); err != nil {
			errs = append(errs, fmt.Errorf("image: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Abort stops a signature check that will not get the rest of the image.
func (v *verifier) Abort() {
	if v.sigW != nil {
		v.sigW.CloseWithError(errors.New("image not read to the end"))
		<-v.sigDone
		v.sigW = nil
	}
}
