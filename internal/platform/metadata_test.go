package platform

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// The metadata providers are tested against fake metadata services
// (httptest on 127.0.0.1) that check every request the way the real
// service does — method, path, query, headers — and answer as it answers.
// The requests go through metadataGetter, a small stand-in for the
// fetcher that keeps its contract: 404 is resource.ErrNotFound, a 5xx or a
// status in Request.RetryStatus is retried a few times, any other status
// is a *resource.StatusError, and offline every request is
// resource.ErrNeedNet.

// fakeAnswer is one answer of a fake metadata route.
type fakeAnswer struct {
	status int
	body   string
}

// fakeRoute is one endpoint of a fake metadata service.
type fakeRoute struct {
	// header lists headers the request must carry, with these values
	// exactly; absent lists headers it must not carry.
	header http.Header
	absent []string
	// refuse is the status the real service answers a request without
	// the headers it needs (GCE 403, OCI 401, Azure 400); 0 means 400.
	refuse int
	// answers are given in order; the last one repeats.
	answers []fakeAnswer
	served  int
}

// fakeMetadata is a fake metadata service. Routes are keyed by
// "METHOD /path" or "METHOD /path?query"; a request to anything else gets
// 404, as from a real web server, and is logged like every request so the
// test can check what was asked.
type fakeMetadata struct {
	t      *testing.T
	mu     sync.Mutex
	routes map[string]*fakeRoute
	log    []string
	srv    *httptest.Server
}

func newFakeMetadata(t *testing.T, routes map[string]*fakeRoute) *fakeMetadata {
	t.Helper()
	f := &fakeMetadata{t: t, routes: routes}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the base URL to put in Env.Endpoint.
func (f *fakeMetadata) url() string { return f.srv.URL }

// requests returns "METHOD /path?query" of every request so far.
func (f *fakeMetadata) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

func (f *fakeMetadata) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	f.log = append(f.log, key)
	route, ok := f.routes[key]
	if !ok {
		http.NotFound(w, r)
		return
	}
	for name, want := range route.header {
		if got := r.Header.Values(name); !slices.Equal(got, want) {
			f.t.Errorf("%s: header %s = %q, want %q", key, name, got, want)
			refuse := route.refuse
			if refuse == 0 {
				refuse = http.StatusBadRequest
			}
			http.Error(w, "missing or wrong "+name, refuse)
			return
		}
	}
	for _, name := range route.absent {
		if got := r.Header.Values(name); len(got) > 0 {
			f.t.Errorf("%s: header %s = %q, want none", key, name, got)
		}
	}
	a := route.answers[min(route.served, len(route.answers)-1)]
	route.served++
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

// answerOK and answerStatus make answers.
func answerOK(body string) fakeAnswer  { return fakeAnswer{http.StatusOK, body} }
func answerStatus(code int) fakeAnswer { return fakeAnswer{code, http.StatusText(code)} }

// metadataGetter performs resource.Requests with net/http, keeping the
// fetcher's contract (see the top of this file). It records every request.
type metadataGetter struct {
	offline bool
	// tries is how often a retryable status is tried (default 4); after
	// that the request ends in resource.ErrTimeout, as the fetcher's does
	// when its total time runs out.
	tries int
	// bindLocalPort makes requests from Request.LocalPort for real (needs
	// CAP_NET_BIND_SERVICE for ports below 1024); otherwise LocalPort is
	// only recorded.
	bindLocalPort bool
	// dialErrs are returned, one per request, before any request goes out
	// (a port in use, a refused bind).
	dialErrs []error
	// answer, when set, answers instead of the network (URLs that must not
	// be dialled in a test, such as link-local addresses).
	answer func(r resource.Request) ([]byte, error)

	mu   sync.Mutex
	reqs []resource.Request
}

func (g *metadataGetter) requests() []resource.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.reqs)
}

func (g *metadataGetter) Get(ctx context.Context, r resource.Request) ([]byte, error) {
	g.mu.Lock()
	g.reqs = append(g.reqs, r)
	var dialErr error
	if len(g.dialErrs) > 0 {
		dialErr, g.dialErrs = g.dialErrs[0], g.dialErrs[1:]
	}
	g.mu.Unlock()
	switch {
	case g.offline:
		return nil, resource.ErrNeedNet
	case dialErr != nil:
		return nil, dialErr
	case g.answer != nil:
		return g.answer(r)
	}

	transport := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	if g.bindLocalPort && r.LocalPort != 0 {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: r.LocalPort}}
		transport.DialContext = d.DialContext
	}
	client := &http.Client{Transport: transport}
	defer client.CloseIdleConnections()

	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	tries := g.tries
	if tries == 0 {
		tries = 4
	}
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(r.Body))
		if err != nil {
			return nil, err
		}
		for k, v := range r.Header {
			req.Header[k] = slices.Clone(v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		retryable := resp.StatusCode >= 500 || slices.Contains(r.RetryStatus, resp.StatusCode)
		switch {
		case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNoContent:
			return body, nil
		case retryable && try < tries:
			continue
		case retryable:
			return nil, fmt.Errorf("%s: status %d after %d tries: %w", r.URL, resp.StatusCode, try, resource.ErrTimeout)
		case resp.StatusCode == http.StatusNotFound:
			return nil, resource.ErrNotFound
		default:
			return nil, &resource.StatusError{URL: config.DescribeURL(r.URL), Status: resp.StatusCode}
		}
	}
}

// metadataEnv returns an Env with g as its Getter, endpoint as the metadata
// base URL, and logs going to t.
func metadataEnv(t *testing.T, g Getter, endpoint string) Env {
	return Env{
		Getter:   g,
		Endpoint: endpoint,
		Root:     t.TempDir(),
		Logger:   slog.New(slog.NewTextHandler(metadataLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Wait:     50 * time.Millisecond,
	}
}

// metadataLogWriter sends log lines to t.Log.
type metadataLogWriter struct{ t *testing.T }

func (w metadataLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// userDataCase is one run of a metadata provider against a fake service.
type userDataCase struct {
	name    string
	routes  map[string]*fakeRoute
	offline bool
	// want is the config the provider must return; when wantErr is set
	// the provider must fail with an error matching it (errors.Is), or,
	// for wantStatus, a *resource.StatusError with that status.
	want       string
	wantErr    error
	wantStatus int
	// wantRequests, when set, is the exact request sequence.
	wantRequests []string
}

// runUserDataCases runs every case against newProvider. Errors must name
// the platform first.
func runUserDataCases(t *testing.T, platform string, newProvider func(Env) Provider, cases []userDataCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeMetadata(t, tc.routes)
			g := &metadataGetter{offline: tc.offline}
			p := newProvider(metadataEnv(t, g, fake.url()))
			got, err := p.FetchConfig(context.Background())
			checkUserData(t, got, err, tc.want, tc.wantErr, tc.wantStatus)
			if err != nil && !strings.HasPrefix(err.Error(), platform+": ") {
				t.Errorf("error %q does not start with %q", err, platform+": ")
			}
			if tc.wantRequests != nil && !slices.Equal(fake.requests(), tc.wantRequests) {
				t.Errorf("requests = %q, want %q", fake.requests(), tc.wantRequests)
			}
		})
	}
}

// errAnyError in a case's wantErr accepts any error.
var errAnyError = errors.New("any error")

// checkUserData compares a FetchConfig result with what a case wants.
func checkUserData(t *testing.T, got []byte, err error, want string, wantErr error, wantStatus int) {
	t.Helper()
	switch {
	case wantStatus != 0:
		var se *resource.StatusError
		if !errors.As(err, &se) || se.Status != wantStatus {
			t.Fatalf("FetchConfig() = %q, %v; want a status %d error", got, err, wantStatus)
		}
	case wantErr == errAnyError:
		if err == nil {
			t.Fatalf("FetchConfig() = %q, nil; want an error", got)
		}
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Fatalf("FetchConfig() = %q, %v; want an error matching %q", got, err, wantErr)
		}
	case err != nil:
		t.Fatalf("FetchConfig() error: %v", err)
	case string(got) != want:
		t.Fatalf("FetchConfig() = %q, want %q", got, want)
	}
	if err != nil {
		t.Logf("error (as an operator reads it): %v", err)
	}
}

// testConfig is the user config the fake services hand out.
const testConfig = `{"ignition":{"version":"3.4.0"}}`

// plainUserDataCases are the cases every platform whose user-data is one
// request must pass. key is the route ("GET /path"), header what the real
// service insists on (refuse: its answer without), encode how the service
// encodes user-data (nil: as is), and on404 what a 404 must give:
// ErrNoConfig for most platforms, resource.ErrNotFound (an error) for
// those whose reference fails.
func plainUserDataCases(key string, header http.Header, refuse int, encode func(string) string, on404 error) []userDataCase {
	route := func(answers ...fakeAnswer) map[string]*fakeRoute {
		return map[string]*fakeRoute{key: {header: header, refuse: refuse, answers: answers}}
	}
	if encode == nil {
		encode = func(s string) string { return s }
	}
	cfg := encode(testConfig)
	return []userDataCase{
		{name: "config", routes: route(answerOK(cfg)), want: testConfig, wantRequests: []string{key}},
		{name: "404", routes: route(answerStatus(http.StatusNotFound)), wantErr: on404, wantRequests: []string{key}},
		{name: "empty user-data", routes: route(answerOK("")), wantErr: ErrNoConfig},
		{
			name:         "5xx then config",
			routes:       route(answerStatus(http.StatusServiceUnavailable), answerStatus(http.StatusInternalServerError), answerOK(cfg)),
			want:         testConfig,
			wantRequests: []string{key, key, key},
		},
		{name: "403", routes: route(answerStatus(http.StatusForbidden)), wantStatus: http.StatusForbidden},
		{name: "offline", routes: route(answerOK(cfg)), offline: true, wantErr: resource.ErrNeedNet, wantRequests: []string{}},
	}
}

// mdBase64 encodes s as the services that base64 user-data serve it.
func mdBase64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// mdGzip compresses b.
func mdGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGunzipIfCompressed(t *testing.T) {
	plain := []byte(`{"ignition":{"version":"3.4.0"}}`)
	got, err := gunzipIfCompressed(plain)
	if err != nil || !bytes.Equal(got, plain) {
		t.Errorf("gunzipIfCompressed(plain) = %q, %v; want it unchanged", got, err)
	}
	got, err = gunzipIfCompressed(mdGzip(t, plain))
	if err != nil || !bytes.Equal(got, plain) {
		t.Errorf("gunzipIfCompressed(gzip) = %q, %v; want %q", got, err, plain)
	}
	if _, err := gunzipIfCompressed([]byte{0x1f, 0x8b, 0, 0}); err == nil {
		t.Error("gunzipIfCompressed(truncated gzip) succeeded, want an error")
	}
}
