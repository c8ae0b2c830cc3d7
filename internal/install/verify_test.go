package install

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/sys"
)

// testImage is what testdata/gpg/image.sig and image.asc sign.
func testImage() []byte { return bytes.Repeat([]byte("image "), 100000) }

func testdataGPG(name string) string { return filepath.Join("testdata", "gpg", name) }

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testdataGPG(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// needGPG skips a test that runs the real gpg when there is none.
func needGPG(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(gpgProgram); err != nil {
		t.Skip("no gpg on PATH (Debian's gnupg package)")
	}
}

func feed(v *verifier, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), 4096)
		if _, err := v.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func TestVerifier(t *testing.T) {
	needGPG(t)
	ctx := context.Background()
	cmds := sys.Runner{}
	data := testImage()

	for _, kr := range []string{"signer.gpg", "signer.asc"} {
		for _, s := range []string{"image.sig", "image.asc"} {
			home, err := newGPGHome(ctx, cmds, testdataGPG(kr), readTestdata(t, s))
			if err != nil {
				t.Fatalf("newGPGHome(%s, %s) = %v", kr, s, err)
			}
			v, err := newVerifier(ctx, nil, home)
			if err != nil {
				t.Fatal(err)
			}
			if err := feed(v, data); err != nil {
				t.Fatalf("%s, %s: Write = %v", kr, s, err)
			}
			if err := v.Finish(); err != nil {
				t.Errorf("%s, %s: Finish = %v", kr, s, err)
			}
			v.Abort() // after Finish: a no-op, not a hang
			home.Close()
			if _, err := os.Stat(home.dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("GnuPG home %s left after Close: %v", home.dir, err)
			}
		}
	}

	home, err := newGPGHome(ctx, cmds, testdataGPG("signer.gpg"), readTestdata(t, "image.sig"))
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()

	// Other bytes: the check fails at the end.
	v, _ := newVerifier(ctx, nil, home)
	feed(v, append(bytes.Clone(data), '!'))
	if err := v.Finish(); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Finish over other bytes = %v, want ErrBadSignature", err)
	}

	// A key the keyring lacks: refused before a byte is written.
	if _, err := newGPGHome(ctx, cmds, testdataGPG("other.asc"), readTestdata(t, "image.sig")); !errors.Is(err, ErrBadSignature) || !errors.Is(err, ErrUnknownKey) {
		t.Errorf("newGPGHome with an unknown signer = %v, want ErrBadSignature and ErrUnknownKey", err)
	}
	// Not a signature, not a keyring.
	if _, err := newGPGHome(ctx, cmds, testdataGPG("signer.gpg"), []byte("not a signature\n")); !errors.Is(err, ErrBadSignature) {
		t.Errorf("newGPGHome with a signature that is none = %v, want ErrBadSignature", err)
	}
	if _, err := newGPGHome(ctx, cmds, testdataGPG("README.md"), readTestdata(t, "image.sig")); err == nil || !strings.Contains(err.Error(), "keyring") {
		t.Errorf("newGPGHome with a keyring that is none = %v, want a keyring error", err)
	}

	// A digest alongside the signature: both must pass.
	dg, _ := ParseDigest("sha256-" + "00" + string(bytes.Repeat([]byte("11"), 31)))
	v, _ = newVerifier(ctx, &dg, home)
	feed(v, data)
	if err := v.Finish(); !errors.Is(err, ErrDigestMismatch) || errors.Is(err, ErrBadSignature) {
		t.Errorf("Finish with a good signature and a wrong digest = %v", err)
	}

	// Stopped midway: Abort ends gpg without a hang.
	v, _ = newVerifier(ctx, nil, home)
	feed(v, data[:len(data)/2])
	v.Abort()

	// A whole file, as a local image is checked before the disk is.
	file := filepath.Join(t.TempDir(), "image")
	os.WriteFile(file, data, 0o644)
	if err := home.check(ctx, file); err != nil {
		t.Errorf("check(the signed file) = %v", err)
	}
	os.WriteFile(file, data[1:], 0o644)
	if err := home.check(ctx, file); !errors.Is(err, ErrBadSignature) {
		t.Errorf("check(another file) = %v, want ErrBadSignature", err)
	}
}

func TestStatusVerdict(t *testing.T) {
	const good = "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG D50FD22CC72A068A signer <s@example.invalid>\n" +
		"[GNUPG:] VALIDSIG DB3F57EA6A11386C79A9197FD50FD22CC72A068A 2026-12-01 1796161775 0 4 0 22 8 00 DB3F57EA6A11386C79A9197FD50FD22CC72A068A\n"
	exit1 := &sys.CommandError{Argv: []string{"gpg"}, ExitCode: 1}
	tests := []struct {
		name    string
		status  string
		runErr  error
		want    error // nil: good
		unknown bool
	}{
		{"good", good, nil, nil, false},
		{"good but gpg failed", good, exit1, ErrBadSignature, false},
		{"bad", "[GNUPG:] BADSIG D50FD22CC72A068A signer\n", exit1, ErrBadSignature, false},
		{"no public key", "[GNUPG:] ERRSIG D50FD22CC72A068A 22 8 00 1796161775 9 DB3F\n[GNUPG:] NO_PUBKEY D50FD22CC72A068A\n", exit1, ErrBadSignature, true},
		{"no public key, ERRSIG only", "[GNUPG:] ERRSIG D50FD22CC72A068A 22 8 00 1796161775 9 DB3F\n", exit1, ErrBadSignature, true},
		{"unknown algorithm", "[GNUPG:] ERRSIG D50FD22CC72A068A 99 8 00 1796161775 4 DB3F\n", exit1, ErrBadSignature, false},
		{"expired key", "[GNUPG:] EXPKEYSIG D50FD22CC72A068A signer\n[GNUPG:] VALIDSIG DB3F\n", nil, ErrBadSignature, false},
		{"revoked key", "[GNUPG:] REVKEYSIG D50FD22CC72A068A signer\n[GNUPG:] VALIDSIG DB3F\n", nil, ErrBadSignature, false},
		{"GOODSIG without VALIDSIG", "[GNUPG:] GOODSIG D50F signer\n", nil, ErrBadSignature, false},
		{"no signature", "[GNUPG:] NODATA 1\n", exit1, ErrBadSignature, false},
		{"status lookalike in a user ID", "gpg: [GNUPG:] GOODSIG\n", nil, ErrBadSignature, false},
		{"no gpg", "", &sys.CommandError{Argv: []string{"gpg"}, ExitCode: -1, Err: exec.ErrNotFound}, errNoGPG, false},
	}
	for _, tt := range tests {
		err := parseStatus([]byte(tt.status)).verdict(tt.runErr)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) || errors.Is(err, ErrUnknownKey) != tt.unknown {
			t.Errorf("%s: verdict = %v, want %v (unknown key %v)", tt.name, err, tt.want, tt.unknown)
		}
	}
	if got := parseStatus([]byte("[GNUPG:] IMPORT_OK 1 DB3F\n[GNUPG:] IMPORT_RES 2 0 2 0 0 0 0 0 0 0 0 0 0 0 0\n")).imported; got != 2 {
		t.Errorf("parseStatus(IMPORT_RES 2 …).imported = %d, want 2", got)
	}
}

// fakeCommands is a system without gpg: it records the argv it was asked
// to run.
type fakeCommands struct{ argv [][]string }

func (f *fakeCommands) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	f.argv = append(f.argv, argv)
	return nil, &sys.CommandError{Argv: argv, ExitCode: -1, Err: exec.ErrNotFound}
}

func (f *fakeCommands) Filter(_ context.Context, _ io.Reader, name string, args ...string) (io.ReadCloser, error) {
	_, err := f.Run(context.Background(), name, args...)
	return nil, err
}

// Without gpg a signature cannot be checked: the image is refused unless
// --image-hash or --insecure covers it, as without a keyring.
func TestIntegrityWithoutGPG(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "os.raw")
	os.WriteFile(img, testImage(), 0o644)
	os.WriteFile(img+".sig", readTestdata(t, "image.sig"), 0o644)
	log := slog.New(slog.DiscardHandler)
	f := fetcher{log: log}
	for _, tt := range []struct {
		name    string
		o       Options
		wantErr error
	}{
		{"signature only", Options{ImageFile: img, Keyring: testdataGPG("signer.gpg")}, ErrUnverified},
		{"with a digest", Options{ImageFile: img, Keyring: testdataGPG("signer.gpg"), ImageHash: sum(testImage())}, nil},
		{"insecure", Options{ImageFile: img, Keyring: testdataGPG("signer.gpg"), Insecure: true}, nil},
	} {
		cmds := &fakeCommands{}
		_, home, err := integrity(context.Background(), tt.o, f, cmds, log)
		if (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || home != nil {
			t.Errorf("%s: integrity = %v, home %v; want %v and no home", tt.name, err, home, tt.wantErr)
		}
		if len(cmds.argv) != 1 || cmds.argv[0][0] != gpgProgram || !slices.Contains(cmds.argv[0], "--import") {
			t.Errorf("%s: ran %q, want one gpg --import", tt.name, cmds.argv)
		}
	}
}
