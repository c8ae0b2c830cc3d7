package install

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/flintboot/flint/config"
)

// The formats themselves are resource's (resource.Decompress, tested
// there); here: the system's xz replaces the Go decoder when given.
func TestDecompressorXZFilter(t *testing.T) {
	raw := bytes.Repeat([]byte("raw image "), 100000)
	var xzb bytes.Buffer
	x, _ := xz.NewWriter(&xzb)
	x.Write(raw)
	x.Close()
	var used int
	filter := func(in io.Reader) (io.ReadCloser, error) {
		used++
		r, err := xz.NewReader(in)
		return io.NopCloser(r), err
	}
	for _, tt := range []struct {
		name     string
		filter   func(io.Reader) (io.ReadCloser, error)
		wantUsed int
	}{{"Go decoder", nil, 0}, {"filter", filter, 1}} {
		used = 0
		r, format, closeDec, err := decompressor(bytes.NewReader(xzb.Bytes()), tt.filter)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := io.ReadAll(r)
		closeDec()
		if err != nil || format != "xz" || !bytes.Equal(got, raw) || used != tt.wantUsed {
			t.Errorf("decompressor(%s) = %s, %d bytes, %v, filter used %d times; want xz, %d bytes, %d", tt.name, format, len(got), err, used, len(raw), tt.wantUsed)
		}
	}
}

func TestFetchRetries(t *testing.T) {
	var mu sync.Mutex
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case r.URL.Path == "/missing":
			http.NotFound(w, r)
		case n <= 2:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	for _, tt := range []struct {
		retries   int
		path      string
		wantCalls int
		wantErr   bool
	}{
		{0, "/x", 1, true},
		{1, "/x", 2, true},
		{2, "/x", 3, false},
		{Infinite, "/x", 3, false},
		{5, "/missing", 1, true},
	} {
		calls = 0
		f, err := newFetcher(ctx, log, tt.retries, time.Millisecond, config.Proxy{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.readSmall(ctx, srv.URL+tt.path)
		if calls != tt.wantCalls || (err != nil) != tt.wantErr || (err == nil && string(got) != "ok") {
			t.Errorf("retries %d, %s: %d requests, %q, %v; want %d requests, error %v", tt.retries, tt.path, calls, got, err, tt.wantCalls, tt.wantErr)
		}
		// The image's download is retried the same way.
		calls = 0
		body, _, err := f.openImage(ctx, Options{ImageURL: srv.URL + tt.path})
		if err == nil {
			got, err = io.ReadAll(body)
			body.Close()
		}
		if calls != tt.wantCalls || (err != nil) != tt.wantErr || (err == nil && string(got) != "ok") {
			t.Errorf("image, retries %d, %s: %d requests, %q, %v; want %d requests, error %v", tt.retries, tt.path, calls, got, err, tt.wantCalls, tt.wantErr)
		}
	}
	f, _ := newFetcher(ctx, log, 0, time.Millisecond, config.Proxy{})
	if _, err := f.readSmall(ctx, "ftp://example.com/x"); err == nil {
		t.Errorf("an ftp URL was read as a local file without an error")
	}
	// URLs are named without their credentials and query.
	_, err := f.readSmall(ctx, "http://user:secret@127.0.0.1:1/sig?token=t")
	if err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "token") {
		t.Errorf("readSmall of a URL with credentials = %v, want an error without them", err)
	}
	if _, _, err := f.openImage(ctx, Options{ImageURL: "http://user:secret@127.0.0.1:1/os.raw?token=t"}); err == nil ||
		strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "token") {
		t.Errorf("openImage of a URL with credentials = %v, want an error without them", err)
	}
	if _, _, err := f.openImage(ctx, Options{ImageURL: "ftp://example.com/os.raw"}); err == nil {
		t.Errorf("openImage of an ftp URL: no error")
	}
}

func TestProxyFromEnv(t *testing.T) {
	env := map[string]string{"https_proxy": "http://proxy:3128", "HTTP_PROXY": "proxy:80", "NO_PROXY": "example.com, .internal,"}
	p := ProxyFromEnv(func(k string) string { return env[k] })
	if p.HTTPProxy == nil || *p.HTTPProxy != "proxy:80" || p.HTTPSProxy == nil || *p.HTTPSProxy != "http://proxy:3128" ||
		strings.Join(p.NoProxy, " ") != "example.com .internal" {
		t.Errorf("ProxyFromEnv(%v) = %+v", env, p)
	}
	if p := ProxyFromEnv(func(string) string { return "" }); p.HTTPProxy != nil || p.HTTPSProxy != nil || p.NoProxy != nil {
		t.Errorf("ProxyFromEnv(nothing) = %+v, want no proxy", p)
	}
	// A proxy the fetcher cannot use is refused before anything else.
	bad := "http://[::1"
	if _, err := newFetcher(context.Background(), slog.New(slog.DiscardHandler), 0, 0, config.Proxy{HTTPProxy: &bad}); err == nil {
		t.Errorf("newFetcher with proxy %q: no error", bad)
	}
}
