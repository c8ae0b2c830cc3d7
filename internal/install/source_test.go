package install

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/flintboot/flint/internal/sys"
)

func TestDecompressor(t *testing.T) {
	raw := make([]byte, 3<<20)
	for i := range raw {
		raw[i] = byte(i * i / 7)
	}
	var gz, xzb, zst bytes.Buffer
	g := gzip.NewWriter(&gz)
	g.Write(raw)
	g.Close()
	x, _ := xz.NewWriter(&xzb)
	x.Write(raw)
	x.Close()
	z, _ := zstd.NewWriter(&zst)
	z.Write(raw)
	z.Close()
	// Two xz streams back to back decode as one image (xz -T makes such
	// files; so does cat).
	twoXZ := append(bytes.Clone(xzb.Bytes()), xzb.Bytes()...)

	var external Decoder
	if path, err := exec.LookPath("xz"); err == nil {
		external = func(in io.Reader) (io.ReadCloser, error) {
			return sys.Runner{}.Filter(context.Background(), in, path, "-dc")
		}
	}
	tests := []struct {
		name, format string
		file         []byte
		want         []byte
		dec          Decoder
	}{
		{"raw", "raw", raw, raw, nil},
		{"gzip", "gzip", gz.Bytes(), raw, nil},
		{"xz", "xz", xzb.Bytes(), raw, nil},
		{"xz twice", "xz", twoXZ, append(bytes.Clone(raw), raw...), nil},
		{"zstd", "zstd", zst.Bytes(), raw, nil},
		{"xz external", "xz", xzb.Bytes(), raw, external},
		{"xz twice external", "xz", twoXZ, append(bytes.Clone(raw), raw...), external},
	}
	for _, tt := range tests {
		if strings.HasSuffix(tt.name, "external") && tt.dec == nil {
			t.Logf("%s: no xz on PATH, skipped", tt.name)
			continue
		}
		r, format, closeDec, err := decompressor(bytes.NewReader(tt.file), tt.dec)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := io.ReadAll(r)
		closeDec()
		if err != nil || format != tt.format || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: format %s, %d bytes, %v; want %s, %d bytes", tt.name, format, len(got), err, tt.format, len(tt.want))
		}
		// Cut short (inside a stream: a cut between two xz streams
		// leaves a valid file), every compressed format fails instead of
		// ending.
		if tt.format == "raw" {
			continue
		}
		r, _, closeDec, err = decompressor(bytes.NewReader(tt.file[:len(tt.file)/2+7]), tt.dec)
		if err == nil {
			_, err = io.ReadAll(r)
			closeDec()
		}
		if err == nil {
			t.Errorf("%s cut in half: no error", tt.name)
		}
	}
}

func TestFetchRetries(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		switch {
		case r.URL.Path == "/missing":
			http.NotFound(w, r)
		case calls <= 2:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	log := slog.New(slog.DiscardHandler)
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
		f := fetcher{client: srv.Client(), retries: tt.retries, backoff: time.Millisecond, log: log}
		got, err := f.readSmall(context.Background(), srv.URL+tt.path)
		if calls != tt.wantCalls || (err != nil) != tt.wantErr || (err == nil && string(got) != "ok") {
			t.Errorf("retries %d, %s: %d requests, %q, %v; want %d requests, error %v", tt.retries, tt.path, calls, got, err, tt.wantCalls, tt.wantErr)
		}
	}
	f := fetcher{client: srv.Client(), log: log}
	if _, err := f.readSmall(context.Background(), "ftp://example.com/x"); err == nil {
		t.Errorf("an ftp URL was read as a local file without an error")
	}
}
