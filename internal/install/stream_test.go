package install

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/stream"
)

// sizedTarget is a fakeTarget whose disk has ss-byte sectors.
type sizedTarget struct {
	*fakeTarget
	ss int64
}

func (s sizedTarget) SectorSize(string) (int64, error) { return s.ss, nil }

func (s sizedTarget) Open(dest string) (Disk, geometry, error) {
	d, g, err := s.fakeTarget.Open(dest)
	g.SectorSize = s.ss
	return d, g, err
}

func TestStreamFormat(t *testing.T) {
	for _, tc := range []struct {
		ss   int64
		want string
	}{{512, "raw.xz"}, {4096, "4k.raw.xz"}, {1024, "raw.xz"}} {
		if got := streamFormat(tc.ss, "/dev/x", slog.New(slog.DiscardHandler)); got != tc.want {
			t.Errorf("streamFormat(%d) = %q, want %q", tc.ss, got, tc.want)
		}
	}
}

// TestRunStream installs from stream metadata served by the test: the
// 512-byte image on a 512-byte disk, the 4Kn one's URL on a 4096-byte
// disk, the metadata's signature URL, and upstream's refusals.
func TestRunStream(t *testing.T) {
	img := makeImage(t)
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/streams/stable.json":
			base := "http://" + r.Host
			w.Write([]byte(`{"architectures": {"x86_64": {"artifacts": {"metal": {"formats": {
				"raw.xz": {"disk": {"location": "` + base + `/img/metal.raw", "signature": "` + base + `/img/metal.raw.sig"}},
				"4k.raw.xz": {"disk": {"location": "` + base + `/img/metal4k.raw", "signature": "` + base + `/sigs/metal4k.sig"}},
				"pxe": {"kernel": {"location": "k", "signature": "k.sig"}, "initramfs": {"location": "i", "signature": "i.sig"}}}}}}}}`))
		case "/img/metal.raw", "/img/metal4k.raw":
			w.Write(img)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	newTarget := func(t *testing.T) *fakeTarget {
		p := filepath.Join(t.TempDir(), "disk")
		if err := os.WriteFile(p, make([]byte, 8<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		return &fakeTarget{path: p, size: 8 << 20, bootDir: t.TempDir()}
	}
	log := slog.New(slog.DiscardHandler)
	run := func(t *testing.T, o Options, target Target) error {
		t.Helper()
		mu.Lock()
		asked = nil
		mu.Unlock()
		o.Dest, o.StreamBaseURL, o.Insecure = "/dev/x", srv.URL+"/streams/", true
		if o.Architecture == "" {
			o.Architecture = "x86_64"
		}
		return Run(context.Background(), o, Deps{Log: log, Target: target, Backoff: time.Millisecond})
	}

	t.Run("512", func(t *testing.T) {
		ft := newTarget(t)
		if err := run(t, Options{Stream: "stable"}, sizedTarget{ft, 512}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(asked, " "); got != "/streams/stable.json /img/metal.raw.sig /img/metal.raw" {
			t.Errorf("asked for %s, want the metadata, the 512-byte image's signature and image", got)
		}
		disk, _ := os.ReadFile(ft.path)
		if !bytes.Equal(disk[34*512:len(img)-33*512], img[34*512:len(img)-33*512]) {
			t.Errorf("the stream's image is not on the disk")
		}
	})
	t.Run("4096", func(t *testing.T) {
		// The metadata's own signature URL is fetched (and, missing, is an
		// error even with --insecure, as an explicit --image-sig is).
		err := run(t, Options{Stream: "stable"}, sizedTarget{newTarget(t), 4096})
		if err == nil || !strings.Contains(err.Error(), "/sigs/metal4k.sig") {
			t.Errorf("Run on a 4Kn disk = %v, want the 4Kn image's signature asked for", err)
		}
		if got := strings.Join(asked, " "); got != "/streams/stable.json /sigs/metal4k.sig" {
			t.Errorf("asked for %s, want the metadata and the 4Kn image's signature", got)
		}
	})
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no architecture", Options{Stream: "stable", Architecture: "riscv64"}, "couldn't find architecture riscv64, platform metal, format raw.xz in stream metadata"},
		{"no stream", Options{Stream: "gone"}, "HTTP status client error (404 Not Found)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(t, tc.o, newTarget(t)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run(%+v) = %v, want %q", tc.o, err, tc.want)
			}
		})
	}
}

func TestStreamOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", "stable", "-u", "http://x/i", "/dev/x"}, "--stream excludes --image-file and --image-url"},
		{[]string{"/dev/x"}, "no image given: use --image-file, --image-url or --stream"},
	} {
		if _, err := ParseArgs(tc.args, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseArgs(%v) = %v, want %q", tc.args, err, tc.want)
		}
	}
	o, err := ParseArgs([]string{"--stream", "next", "-a", "aarch64", "--stream-base-url", "http://m/s/", "/dev/x"}, nil)
	if err != nil || o.Stream != "next" || o.Architecture != "aarch64" || o.StreamBaseURL != "http://m/s/" {
		t.Errorf("ParseArgs(--stream …) = %+v, %v", o, err)
	}
	if o, err := ParseArgs([]string{"-s", "stable", "/dev/x"}, nil); err != nil || o.Architecture != hostArchitecture() {
		t.Errorf("ParseArgs(-s stable) architecture = %q, %v, want this machine's %q", o.Architecture, err, hostArchitecture())
	}
}

// sixRowStream is stream metadata with six architecture, platform and
// format rows.
const sixRowStream = `{"stream": "testing", "architectures": {
  "x86_64": {"artifacts": {
    "metal": {"formats": {"raw.xz": {"disk": {"location": "m"}}, "4k.raw.xz": {"disk": {"location": "m4"}}, "iso": {"disk": {"location": "i"}}}},
    "qemu": {"formats": {"qcow2.xz": {"disk": {"location": "q"}}}},
    "openstack": {"formats": {"qcow2.xz": {"disk": {"location": "o"}}}}}},
  "s390x": {"artifacts": {"metal": {"formats": {"raw.xz": {"disk": {"location": "z"}}}}}}}}`

// TestFetchStream reads stream metadata through install's fetcher, with
// coreos-installer's words for a failed fetch.
func TestFetchStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/streams/testing.json":
			w.Write([]byte(sixRowStream))
		case "/streams/broken.json":
			w.Write([]byte(`{"architectures": [`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	get := func(name string) (*stream.Stream, error) {
		return FetchStream(context.Background(), name, srv.URL+"/streams/", Deps{Backoff: time.Millisecond})
	}
	if s, err := get("testing"); err != nil || len(s.Rows()) != 6 {
		t.Errorf("Fetch(testing) = %v, %v, want 6 rows", s, err)
	}
	if _, err := get("missing"); err == nil || err.Error() != "fetching stream metadata: fetching '"+srv.URL+"/streams/missing.json': HTTP status client error (404 Not Found) for url ("+srv.URL+"/streams/missing.json)" {
		t.Errorf("Fetch(missing) = %v, want upstream's failed fetch", err)
	}
	if _, err := get("broken"); err == nil || !strings.HasPrefix(err.Error(), "decoding stream metadata: ") {
		t.Errorf("Fetch(broken) = %v, want a decoding error", err)
	}
}
