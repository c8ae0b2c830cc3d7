package resource_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// closedEndpoint refuses connections: cloud endpoints a test does not set
// point here, so no test ever reaches a real metadata service.
const closedEndpoint = "http://127.0.0.1:1"

// logBuffer keeps what the fetcher logged, and shows it with t.Log.
type logBuffer struct {
	t  testing.TB
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Log(strings.TrimSpace(string(p)))
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newFetcher returns a fetcher with short backoffs whose cloud endpoints
// point nowhere unless o sets them, and its log.
func newFetcher(t testing.TB, o resource.Options) (*resource.Fetcher, *logBuffer) {
	t.Helper()
	logs := &logBuffer{t: t}
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if o.Version == "" {
		o.Version = "test"
	}
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 10 * time.Millisecond
	}
	for _, e := range []*string{&o.IMDSEndpoint, &o.S3Endpoint, &o.GCEMetadataEndpoint, &o.GCSEndpoint, &o.AzureIMDSEndpoint} {
		if *e == "" {
			*e = closedEndpoint
		}
	}
	return resource.New(o), logs
}

func res(source string) config.Resource {
	return config.Resource{Source: &source}
}

func withHash(r config.Resource, h string) config.Resource {
	r.Verification.Hash = &h
	return r
}

func withGzip(r config.Resource) config.Resource {
	g := "gzip"
	r.Compression = &g
	return r
}

func withHeader(r config.Resource, name, value string) config.Resource {
	r.HTTPHeaders = append(r.HTTPHeaders, config.HTTPHeader{Name: name, Value: &value})
	return r
}

func sha512Of(b []byte) string {
	s := sha512.Sum512(b)
	return "sha512-" + hex.EncodeToString(s[:])
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256-" + hex.EncodeToString(s[:])
}

// counter counts requests, safely from the server's goroutines.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
