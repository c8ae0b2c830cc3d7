package engine

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// TestMaxConfigSize checks every config a fetch stage reads (user,
// referenced, base) is held to the size limit, which the kernel argument
// sets, and that the refusal names the limit and the argument.
func TestMaxConfigSize(t *testing.T) {
	const small = `{"ignition":{"version":"3.4.0"}}` // 32 bytes
	padded := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a/fairly/long/path/to/make/it/large"}]}}`
	// A referenced config compressed: larger than the config naming it.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(padded + strings.Repeat(" ", 2000)))
	zw.Close()
	merging := `{"ignition":{"version":"3.4.0","config":{"merge":[{"compression":"gzip","source":"data:;base64,` +
		base64.StdEncoding.EncodeToString(gz.Bytes()) + `"}]}}}`
	tests := []struct {
		name     string
		cmdline  string
		max      int64
		user     string
		base     string
		wantErr  error
		wantText string
	}{
		{name: "under the default", user: padded},
		{name: "at the kernel argument's limit", cmdline: "flint.config.max_size=32", user: small},
		{name: "over the kernel argument's limit", cmdline: "flint.config.max_size=64", user: padded, wantErr: config.ErrTooLarge,
			wantText: "user config from test: config is too large: 102 bytes, over the limit of 64 bytes; the kernel argument flint.config.max_size raises the limit"},
		{name: "raised with a unit", cmdline: "flint.config.max_size=1K", user: padded},
		{name: "over the option's limit", max: 64, user: padded, wantErr: config.ErrTooLarge},
		{name: "referenced config", cmdline: "flint.config.max_size=3K", user: merging},
		// The fetcher stops reading at the limit: the referenced config
		// is refused before it is whole.
		{name: "referenced config over the limit", cmdline: "flint.config.max_size=1K", user: merging, wantErr: resource.ErrTooLarge,
			wantText: "ignition.config.merge.0 data URL: data URL: writing: too large: more than 1 KiB; the kernel argument flint.config.max_size raises the limit"},
		{name: "base config over the limit", cmdline: "flint.config.max_size=64", user: small, base: padded, wantErr: config.ErrTooLarge,
			wantText: "base config "},
		{name: "not a size", cmdline: "flint.config.max_size=lots", user: small, wantErr: config.ErrBadSize,
			wantText: "kernel argument flint.config.max_size: size \"lots\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "fetch-offline", serve(tt.user))
			h.opts.MaxConfigSize = tt.max
			if tt.cmdline != "" {
				h.write("proc/cmdline", "quiet "+tt.cmdline+"\n")
			}
			if tt.base != "" {
				h.write("usr/lib/ignition/base.d/10-base.ign", tt.base)
			}
			err := h.run("fetch-offline")
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Run() = %v, want success", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Run() = %v, want %v containing %q", err, tt.wantErr, tt.wantText)
			}
			if h.hasCache() {
				t.Error("the stage cached a config it refused")
			}
		})
	}
}

// TestMaxConfigSizeBoundsTheDownload serves the user config named on the
// kernel command line one byte over the limit, then holds the connection
// open: the fetch stage must fail at that byte, naming the limit and the
// kernel argument, instead of reading the whole body before the size
// check.
func TestMaxConfigSizeBoundsTheDownload(t *testing.T) {
	const limit = 1024
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Length", "100000000")
		w.Write(bytes.Repeat([]byte(" "), limit+1))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	defer srv.Close()
	h := newHarness(t, "fetch", serve(`{"ignition":{"version":"3.4.0"}}`))
	h.write("proc/cmdline", "ignition.config.url="+srv.URL+"/user.ign flint.config.max_size=1K\n")
	start := time.Now()
	err := h.run("fetch")
	if !errors.Is(err, resource.ErrTooLarge) || !strings.Contains(err.Error(), "more than 1 KiB; the kernel argument flint.config.max_size raises the limit") {
		t.Fatalf("Run() = %v, want ErrTooLarge naming the limit and the kernel argument", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run() took %v: the fetch read on past the limit", d)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the config was asked for %d times, want once", n)
	}
	if h.hasCache() {
		t.Error("the stage cached a config it refused")
	}
}

// TestConfigSizeReported checks the fetch stages report the running total
// of the configs they read before parsing each, and the later stages do
// not.
func TestConfigSizeReported(t *testing.T) {
	referenced := `{"ignition":{"version":"3.4.0"}}`
	user := `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,` + url.PathEscape(referenced) + `"}]}}}`
	h := newHarness(t, "fetch-offline", serve(user))
	var got []int64
	h.opts.ConfigSize = func(total int64) { got = append(got, total) }
	h.mustRun("fetch-offline")
	if want := []int64{int64(len(user)), int64(len(user) + len(referenced))}; !slices.Equal(got, want) {
		t.Errorf("ConfigSize calls = %v, want %v", got, want)
	}
	got = nil
	h.write("usr/lib/ignition/base.d/10-base.ign", referenced)
	h.mustRun("kargs")
	if got != nil {
		t.Errorf("ConfigSize calls in the kargs stage = %v, want none", got)
	}
}
