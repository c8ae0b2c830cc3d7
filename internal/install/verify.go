package install

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flintboot/flint/internal/escape"
)

// Commands runs the programs the signature check needs; sys.Runner is the
// real one. Run's command reads nothing on its standard input; Filter's
// reads in, and the returned reader is its standard output, ending with
// the command's failure (a *sys.CommandError) instead of io.EOF.
type Commands interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
	Filter(ctx context.Context, in io.Reader, name string, args ...string) (io.ReadCloser, error)
}

// gpgProgram is GnuPG's command. OpenPGP signatures are checked by the
// system's gpg, as coreos-installer does (src/io/verify.rs), not by an
// OpenPGP library linked into flint: that would be a tenth of the binary,
// in every initramfs, for a command only the live installer runs.
const gpgProgram = "gpg"

// gpgHome is a private, temporary GnuPG home holding the keyring's keys
// and the image's signature: the system's own keys and settings play no
// part, and nothing outlives the install.
type gpgHome struct {
	cmds Commands
	dir  string
	sig  string // the signature's file
}

// errNoGPG is gpg missing from the live environment.
var errNoGPG = errors.New("checking an OpenPGP signature needs gpg (GnuPG), which is not installed")

// newGPGHome imports keyring into a new GnuPG home and stores sig there,
// then checks that a key of the keyring made the signature: a signature
// by a key the keyring lacks (or one that is no signature) is refused
// here, before anything reaches the disk. Close removes the home.
func newGPGHome(ctx context.Context, cmds Commands, keyring string, sig []byte) (*gpgHome, error) {
	dir, err := os.MkdirTemp("", "flint-gpg-") // mode 0700, as gpg wants its home
	if err != nil {
		return nil, fmt.Errorf("GnuPG home: %w", err)
	}
	h := &gpgHome{cmds: cmds, dir: dir, sig: filepath.Join(dir, "image.sig")}
	if err := os.WriteFile(h.sig, sig, 0o600); err != nil {
		h.Close()
		return nil, fmt.Errorf("GnuPG home: %w", err)
	}
	out, err := cmds.Run(ctx, gpgProgram, h.args("--import", keyring)...)
	if errors.Is(err, exec.ErrNotFound) {
		h.Close()
		return nil, errNoGPG
	}
	if st := parseStatus(out); st.imported == 0 {
		h.Close()
		if err == nil {
			err = errors.New("no OpenPGP public key in it")
		}
		return nil, fmt.Errorf("keyring %s: %w", keyring, err)
	}
	// Checked against no data, a signature by a key of the keyring is
	// BAD; one by any other key cannot be checked (NO_PUBKEY).
	out, err = cmds.Run(ctx, gpgProgram, h.args("--verify", h.sig, os.DevNull)...)
	if st := parseStatus(out); !st.bad {
		h.Close()
		return nil, fmt.Errorf("image signature: %w", st.verdict(err))
	}
	return h, nil
}

// args are gpg's arguments for an operation in the home: unattended, with
// machine-readable status lines on standard output (doc/DETAILS in
// GnuPG's sources, "Format of the --status-fd output").
func (h *gpgHome) args(op ...string) []string {
	return append([]string{"--homedir", h.dir, "--batch", "--no-tty", "--status-fd", "1"}, op...)
}

// check verifies the signature over the file at name, whole.
func (h *gpgHome) check(ctx context.Context, name string) error {
	out, err := h.cmds.Run(ctx, gpgProgram, h.args("--verify", h.sig, name)...)
	return parseStatus(out).verdict(err)
}

// Close removes the home.
func (h *gpgHome) Close() error { return os.RemoveAll(h.dir) }

// gpgStatus is what gpg's status lines say about one signature.
type gpgStatus struct {
	good, valid, bad bool   // GOODSIG, VALIDSIG, BADSIG
	fingerprint      string // VALIDSIG's
	noKey            string // NO_PUBKEY: the signer's key ID
	errSig           string // ERRSIG's reason code
	stale            string // EXPSIG, EXPKEYSIG or REVKEYSIG
	imported         int    // IMPORT_RES's count of keys processed
}

// parseStatus reads "[GNUPG:] KEYWORD ARGS" lines; other lines are
// ignored.
func parseStatus(out []byte) gpgStatus {
	var st gpgStatus
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "[GNUPG:] ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		arg := func(i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		switch f[0] {
		case "GOODSIG":
			st.good = true
		case "VALIDSIG":
			st.valid, st.fingerprint = true, arg(1)
		case "BADSIG":
			st.bad = true
		case "NO_PUBKEY":
			st.noKey = arg(1)
		case "ERRSIG":
			st.errSig = arg(6)
			if st.noKey == "" && st.errSig == "9" {
				st.noKey = arg(1)
			}
		case "EXPSIG", "EXPKEYSIG", "REVKEYSIG":
			st.stale = f[0]
		case "IMPORT_RES":
			fmt.Sscan(arg(1), &st.imported)
		}
	}
	return st
}

// verdict is nil for a good signature from a key of the keyring, with
// gpg exiting successfully; else an ErrBadSignature saying why (runErr is
// gpg's failure, if it failed).
func (st gpgStatus) verdict(runErr error) error {
	switch {
	case errors.Is(runErr, exec.ErrNotFound):
		return errNoGPG
	case st.noKey != "":
		return fmt.Errorf("%w: %w %s (not in the keyring)", ErrBadSignature, ErrUnknownKey, escape.Line(st.noKey))
	case st.bad:
		return fmt.Errorf("%w: the image is not what was signed", ErrBadSignature)
	case st.stale == "EXPSIG":
		return fmt.Errorf("%w: the signature has expired", ErrBadSignature)
	case st.stale == "EXPKEYSIG":
		return fmt.Errorf("%w: made by an expired key", ErrBadSignature)
	case st.stale == "REVKEYSIG":
		return fmt.Errorf("%w: made by a revoked key", ErrBadSignature)
	case st.errSig != "":
		return fmt.Errorf("%w: gpg cannot check it (ERRSIG code %s)", ErrBadSignature, escape.Line(st.errSig))
	case runErr != nil:
		return fmt.Errorf("%w: %w", ErrBadSignature, runErr)
	case !st.good || !st.valid:
		return fmt.Errorf("%w: gpg found no good signature", ErrBadSignature)
	}
	return nil
}

// verifier checks the image file as given (the compressed bytes) while it
// streams past: a digest, an OpenPGP detached signature (gpg reading the
// stream), or both. Write never fails for a bad image; Finish says whether
// the image was good.
type verifier struct {
	digest *Digest
	hash   hash.Hash

	sigW    *io.PipeWriter
	sigDone chan error
	cancel  context.CancelFunc
}

// newVerifier starts checking. home is nil without a signature; digest is
// nil without a hash.
func newVerifier(ctx context.Context, digest *Digest, home *gpgHome) (*verifier, error) {
	v := &verifier{digest: digest}
	if digest != nil {
		v.hash = digest.New()
	}
	if home == nil {
		return v, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	out, err := home.cmds.Filter(ctx, pr, gpgProgram, home.args("--verify", home.sig, "-")...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("image signature: %w", err)
	}
	v.sigW, v.sigDone, v.cancel = pw, make(chan error, 1), cancel
	go func() {
		status, err := io.ReadAll(out)
		out.Close()
		verdict := parseStatus(status).verdict(err)
		// A gpg that stopped early makes the next Write fail with its
		// reason instead of blocking.
		pr.CloseWithError(cmpErr(verdict, errors.New("signature check ended early")))
		v.sigDone <- verdict
	}()
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
		v.cancel()
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
		v.cancel()
		<-v.sigDone
		v.sigW = nil
	}
}
