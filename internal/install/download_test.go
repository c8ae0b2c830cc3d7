package install

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestDecompressedName(t *testing.T) {
	for _, tc := range []struct {
		on         bool
		name, want string
		decompress bool
	}{
		{false, "a.raw.xz", "a.raw.xz", false},
		{true, "a.raw.xz", "a.raw", true},
		{true, "a.raw.gz", "a.raw", true},
		{true, "gcp.tar.gz", "gcp.tar.gz", false},
		{true, "x.tar.xz", "x.tar.xz", false},
		{true, "live.iso", "live.iso", false},
	} {
		if got, d := decompressedName(tc.on, tc.name); got != tc.want || d != tc.decompress {
			t.Errorf("decompressedName(%v, %q) = %q, %v, want %q, %v", tc.on, tc.name, got, d, tc.want, tc.decompress)
		}
	}
}

// TestDownload downloads from stream metadata and from a URL, served by
// the test, with signatures made by a key of the test's keyring.
func TestDownload(t *testing.T) {
	needGPG(t)
	dir := t.TempDir()
	keyringPath, sign := testSigners(t, dir)
	signer, other := "s@example.invalid", "o@example.invalid"

	plain := bytes.Repeat([]byte("metal image "), 10000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	files := map[string][]byte{
		"/a/metal.raw.gz":     gz.Bytes(),
		"/a/metal.raw.gz.sig": sign(signer, gz.Bytes()),
		"/a/bad.raw.gz":       gz.Bytes(),
		"/a/bad.raw.gz.sig":   sign(other, gz.Bytes()),
		"/a/unsigned.raw.gz":  gz.Bytes(),
		"/k/kernel":           []byte("kernel"),
		"/k/kernel.sig":       sign(signer, []byte("kernel")),
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/streams/stable.json" {
			base := "http://" + r.Host
			w.Write([]byte(`{"architectures": {"x86_64": {"artifacts": {
				"metal": {"formats": {"raw.gz": {"disk": {"location": "` + base + `/a/metal.raw.gz", "signature": "` + base + `/a/metal.raw.gz.sig"}}}},
				"bad": {"formats": {"raw.gz": {"disk": {"location": "` + base + `/a/bad.raw.gz", "signature": "` + base + `/a/bad.raw.gz.sig"}}}},
				"pxe": {"formats": {"pxe": {"kernel": {"location": "` + base + `/k/kernel", "signature": "` + base + `/k/kernel.sig"}}}}}}}}`))
			return
		}
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()

	download := func(t *testing.T, o DownloadOptions) ([]string, error) {
		t.Helper()
		mu.Lock()
		asked = nil
		mu.Unlock()
		if o.Stream == "" {
			o.Stream, o.Architecture, o.Format = "stable", "x86_64", "raw.gz"
		}
		o.StreamBaseURL, o.Keyring = srv.URL+"/streams/", keyringPath
		var got []string
		err := Download(context.Background(), o, Deps{}, func(p string) { got = append(got, p) })
		return got, err
	}

	out := t.TempDir()
	got, err := download(t, DownloadOptions{Platform: "metal", Directory: out})
	if err != nil || len(got) != 1 || got[0] != filepath.Join(out, "metal.raw.gz") {
		t.Fatalf("Download(stable metal) = %v, %v", got, err)
	}
	if b, _ := os.ReadFile(got[0]); !bytes.Equal(b, gz.Bytes()) {
		t.Errorf("the downloaded image differs from the served one")
	}
	if b, _ := os.ReadFile(got[0] + ".sig"); !bytes.Equal(b, files["/a/metal.raw.gz.sig"]) {
		t.Errorf("the signature file differs from the served one")
	}
	// Again: the kept file checks out and is not fetched.
	if _, err := download(t, DownloadOptions{Platform: "metal", Directory: out}); err != nil {
		t.Fatal(err)
	}
	for _, a := range asked {
		if a == "/a/metal.raw.gz" {
			t.Errorf("the second download fetched the image again: %v", asked)
		}
	}

	t.Run("decompress", func(t *testing.T) {
		out := t.TempDir()
		got, err := download(t, DownloadOptions{Platform: "metal", Directory: out, Decompress: true})
		if err != nil || len(got) != 1 || got[0] != filepath.Join(out, "metal.raw") {
			t.Fatalf("Download -d = %v, %v", got, err)
		}
		if b, _ := os.ReadFile(got[0]); !bytes.Equal(b, plain) {
			t.Errorf("the decompressed image differs")
		}
		if names, _ := filepath.Glob(filepath.Join(out, "*")); len(names) != 1 {
			t.Errorf("-d left %v, want the image alone (no signature, no scratch file)", names)
		}
	})
	t.Run("bad signature", func(t *testing.T) {
		out := t.TempDir()
		if _, err := download(t, DownloadOptions{Platform: "bad", Directory: out}); err == nil {
			t.Fatal("a signature by a key not in the keyring was accepted")
		}
		if names, _ := filepath.Glob(filepath.Join(out, "*")); len(names) != 0 {
			t.Errorf("a failed check left %v", names)
		}
	})
	t.Run("pxe", func(t *testing.T) {
		out := t.TempDir()
		got, err := download(t, DownloadOptions{Stream: "stable", Architecture: "x86_64", Platform: "pxe", Format: "pxe", Directory: out})
		if err != nil || len(got) != 1 || got[0] != filepath.Join(out, "kernel") {
			t.Errorf("Download(pxe) = %v, %v", got, err)
		}
	})
	t.Run("url", func(t *testing.T) {
		out := t.TempDir()
		if _, err := download(t, DownloadOptions{ImageURL: srv.URL + "/a/unsigned.raw.gz", Directory: out}); err == nil || err.Error() != "--insecure not specified and signature not found" {
			t.Errorf("Download of an unsigned URL = %v, want upstream's refusal", err)
		}
		got, err := download(t, DownloadOptions{ImageURL: srv.URL + "/a/unsigned.raw.gz", Directory: out, Insecure: true})
		if err != nil || len(got) != 1 {
			t.Fatalf("Download --insecure = %v, %v", got, err)
		}
		if _, err := os.Stat(got[0] + ".sig"); err == nil {
			t.Errorf("a signature file was written for an unsigned image")
		}
		got, err = download(t, DownloadOptions{ImageURL: srv.URL + "/a/metal.raw.gz", Directory: out})
		if err != nil || len(got) != 1 || !strings.Contains(strings.Join(asked, " "), "/a/metal.raw.gz.sig") {
			t.Errorf("Download -u = %v, %v (asked %v), want the image and URL.sig", got, err, asked)
		}
	})
	t.Run("not in stream", func(t *testing.T) {
		want := "couldn't find architecture x86_64, platform metal, format vmdk in stream metadata"
		if _, err := download(t, DownloadOptions{Stream: "stable", Architecture: "x86_64", Platform: "metal", Format: "vmdk", Directory: t.TempDir()}); err == nil || err.Error() != want {
			t.Errorf("Download(vmdk) = %v, want %q", err, want)
		}
	})
}

// testSigners makes two signing keys, "signer <s@example.invalid>" and
// "other <o@example.invalid>", in a GnuPG home of its own under dir, and
// returns a keyring holding only the signer's public key and a function
// that signs bytes with either key (by its address), detached, as a
// stream's artifacts are signed.
func testSigners(t *testing.T, dir string) (keyring string, sign func(who string, b []byte) []byte) {
	t.Helper()
	home := filepath.Join(dir, "gnupg")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	gpg := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--no-tty", "--passphrase", ""}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %v: %v", args, err)
		}
		return out
	}
	// Making keys and signing starts gpg-agent in the home: stop it.
	t.Cleanup(func() { exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run() })
	gpg(nil, "--quick-generate-key", "signer <s@example.invalid>", "ed25519", "sign", "never")
	gpg(nil, "--quick-generate-key", "other <o@example.invalid>", "ed25519", "sign", "never")
	keyring = filepath.Join(dir, "keyring.gpg")
	if err := os.WriteFile(keyring, gpg(nil, "--export", "s@example.invalid"), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyring, func(who string, b []byte) []byte {
		return gpg(b, "--local-user", who, "--detach-sign", "--output", "-")
	}
}
