package agent

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// request is one request a fake metadata service received.
type request struct {
	method, uri string
	header      http.Header
	body        string
	remotePort  string
}

// fakeService is a local metadata service: it answers each route
// ("GET /path?query") with its handler, everything else with 404, and
// records every request.
type fakeService struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []request
	routes map[string]http.HandlerFunc
}

func newFakeService(t *testing.T, routes map[string]http.HandlerFunc) *fakeService {
	t.Helper()
	f := &fakeService{routes: routes}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, port, _ := net.SplitHostPort(r.RemoteAddr)
		f.mu.Lock()
		f.reqs = append(f.reqs, request{r.Method, r.RequestURI, r.Header.Clone(), string(body), port})
		h := f.routes[r.Method+" "+r.RequestURI]
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// requests returns what the service received, in order.
func (f *fakeService) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reqs...)
}

// count returns how many requests hit "METHOD uri".
func (f *fakeService) count(route string) int {
	n := 0
	for _, r := range f.requests() {
		if r.method+" "+r.uri == route {
			n++
		}
	}
	return n
}

// answer replies with status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// failing answers failStatus the first n times, then as next does.
func failing(n, failStatus int, next http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n--
		fail := n >= 0
		mu.Unlock()
		if fail {
			w.WriteHeader(failStatus)
			return
		}
		next(w, r)
	}
}

// testLogger sends the agent's log to the test's.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testFetcher is the real fetcher with its retries shortened: a request
// that keeps failing gives up after total.
func testFetcher(t *testing.T, total time.Duration) *resource.Fetcher {
	f := resource.New(resource.Options{Logger: testLogger(t), Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	f.SetTotalTimeout(total)
	return f
}

// newTestAgent returns the agent for id with the platform's services at
// base and root as its filesystem root.
func newTestAgent(t *testing.T, id, base, root string) *Agent {
	t.Helper()
	a, err := New(Deps{Getter: testFetcher(t, 2*time.Second), Logger: testLogger(t), Root: root, Endpoint: base, LocalPort: func() int { return 0 }, DriveWait: 10 * time.Millisecond}, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Well-formed public keys (made with ssh-keygen for these tests), for the
// tests that write keys: the agent refuses malformed ones.
const (
	testKeyOne = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICL5yb/1jNsSJ1oA3LqFLD+VZyWl9xTTZTfwOaqq0EiO one"
	testKeyTwo = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDKl8xhuYZDmP2DMNA73QnDw4/X92/04Jy7cKmSLWcTbZzB4snHrlK0NB7ndwgu/8i19VIf8H5+jArwgltNeWIe84fDjoTd5sgVYh8SoZ16fv/QsnBfl9QeSq3rL/NhXRatuIOAVKY7/y2roDpIeriqA16JObZLog90oX3ENMcLYQ== two"
)
