// Package platformtest has fakes of the platforms' services for tests of
// package platform and of its users (the agent, cmd/flint's front ends):
// a local HTTP service that answers routes and records every request, and
// Azure's WireServer (its documents and the check-in exchange it expects).
// It does not import package platform, whose own tests use it.
//
// Family: config sources, platforms and agent (internal/README.md).
package platformtest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Request is one request a Service received.
type Request struct {
	Method, URI string
	Header      http.Header
	Body        string
	// RemotePort is the client's port (Scaleway's service answers only
	// privileged ones).
	RemotePort string
}

// Route is the request's "METHOD uri", as routes are keyed.
func (r Request) Route() string { return r.Method + " " + r.URI }

// Service is a local metadata service: it answers each route ("GET
// /path?query") with its handler, everything else with 404, and records
// every request. The server is closed when the test ends.
type Service struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []Request
	routes map[string]http.HandlerFunc
}

// NewService starts a service answering routes.
func NewService(t *testing.T, routes map[string]http.HandlerFunc) *Service {
	t.Helper()
	f := &Service{routes: routes}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, port, _ := net.SplitHostPort(r.RemoteAddr)
		f.mu.Lock()
		f.reqs = append(f.reqs, Request{r.Method, r.RequestURI, r.Header.Clone(), string(body), port})
		h := f.routes[r.Method+" "+r.RequestURI]
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// Handle answers route with h from now on.
func (f *Service) Handle(route string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.routes == nil {
		f.routes = map[string]http.HandlerFunc{}
	}
	f.routes[route] = h
}

// Requests returns what the service received, in order.
func (f *Service) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// Count returns how many requests hit route ("METHOD uri").
func (f *Service) Count(route string) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Route() == route {
			n++
		}
	}
	return n
}

// Answer replies with status and body.
func Answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// Failing answers failStatus the first n times, then as next does.
func Failing(n, failStatus int, next http.HandlerFunc) http.HandlerFunc {
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
