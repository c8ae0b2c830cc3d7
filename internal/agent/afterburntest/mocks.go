// Package afterburntest serves the documents of Afterburn's own mock tests
// (coreos/afterburn src/providers/<platform>/mock_tests.rs, at 790aa94; the
// file each case comes from is named in it), kept in testdata/<platform>.json
// with what those tests assert, for the agent's tests and the afterburn
// front end's in cmd/flint: the fake service answering a case's routes as
// the mocks do, and the check of a check-in's requests.
//
// Family: config sources, platforms and agent (internal/README.md).
package afterburntest

import (
	"embed"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

//go:embed testdata/*.json
var testdata embed.FS

// Mock is one platform's file: the documents its mock tests serve, and
// what those tests assert.
type Mock struct {
	// ID is the platform (the file's name); Source the mock test file.
	ID     string `json:"-"`
	Source string `json:"source"`
	Cases  []Case `json:"cases"`
}

// Case is one mock test.
type Case struct {
	Name string `json:"name"`
	// Routes answer "METHOD /path" with a body; "!403" answers that
	// status instead. Other requests get 404.
	Routes map[string]string `json:"routes"`
	// Token, when set, must be on every GET (Akamai's Metadata-Token,
	// AWS's IMDSv2 token), as the mocks match it.
	Token string `json:"token"`
	// Rebase is the address the documents name (WireServer's URLs in
	// Azure's goal state): the fake serves them, so it is replaced by the
	// fake's address in every body, as the mocks' client does with
	// mock_base_url.
	Rebase     string            `json:"rebase"`
	Hostname   *string           `json:"hostname"`
	AdminUser  *string           `json:"adminUser"`
	Keys       []string          `json:"keys"`
	Attributes map[string]string `json:"attributes"`
	// CheckIn, when set, is what the mock matches on the check-in's
	// requests, by route.
	CheckIn map[string]CheckInRequest `json:"checkIn"`
}

// CheckInRequest is what a mock matches on a check-in request: headers
// (by substring of the value) and substrings of the body.
type CheckInRequest struct {
	Header map[string]string `json:"header"`
	Body   []string          `json:"body"`
}

// Mocks returns every platform's file, in the order of their names.
func Mocks(t *testing.T) []Mock {
	t.Helper()
	names, err := testdata.ReadDir("testdata")
	if err != nil || len(names) == 0 {
		t.Fatalf("no Afterburn mock documents: %v", err)
	}
	var mocks []Mock
	for _, e := range names {
		data, err := testdata.ReadFile(path.Join("testdata", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m := Mock{ID: strings.TrimSuffix(e.Name(), ".json")}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		mocks = append(mocks, m)
	}
	return mocks
}

// azureIMDSFieldPrefix is where Afterburn asks Azure's IMDS one field at a
// time; flint reads the whole instance document.
const azureIMDSFieldPrefix = "GET /metadata/instance/"

// AzureInstanceRoute is where flint reads Azure's instance document.
const AzureInstanceRoute = "GET /metadata/instance?api-version=2021-02-01"

// azureInstanceDocument builds the instance document flint asks for from
// the field routes of Afterburn's mocks (/metadata/instance/compute/name?…
// &format=text), each field at its path; a body that is JSON (publicKeys)
// is kept as JSON.
func azureInstanceDocument(t *testing.T, routes map[string]string) string {
	doc := map[string]any{}
	for route, body := range routes {
		rest, ok := strings.CutPrefix(route, azureIMDSFieldPrefix)
		if !ok {
			continue
		}
		p, _, _ := strings.Cut(rest, "?")
		parts := strings.Split(p, "/")
		node := doc
		for _, p := range parts[:len(parts)-1] {
			next, ok := node[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				node[p] = next
			}
			node = next
		}
		var v any = body
		if s := strings.TrimSpace(body); strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				t.Fatalf("route %s: %v", route, err)
			}
		}
		node[parts[len(parts)-1]] = v
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Service is the platform's metadata service answering one case.
type Service struct {
	*platformtest.Service
	mu      sync.Mutex
	missing []string
}

// MissingToken lists the GETs that came without the case's token.
func (s *Service) MissingToken() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.missing)
}

// Serve starts the service of platform id answering c as the mocks do:
// Azure's instance document besides its fields, the check-in's own
// requests accepted with an empty answer, the Metadata header IMDS
// requires, the documents' addresses rebased onto the fake.
func Serve(t *testing.T, id string, c Case) *Service {
	t.Helper()
	bodies := c.Routes
	if id == "azure" {
		bodies = maps.Clone(c.Routes)
		bodies[AzureInstanceRoute] = azureInstanceDocument(t, c.Routes)
	}
	for route := range c.CheckIn {
		if _, ok := bodies[route]; !ok {
			bodies = maps.Clone(bodies)
			bodies[route] = ""
		}
	}
	s := &Service{}
	routes := map[string]http.HandlerFunc{}
	for route, body := range bodies {
		routes[route] = func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(id, "azure") && (strings.HasPrefix(route, "GET /metadata/") || strings.HasPrefix(route, "GET /Microsoft.Compute/")) {
				// Afterburn's mocks match the header IMDS requires.
				if r.Header.Get("Metadata") != "true" {
					http.Error(w, "Required metadata header not specified", http.StatusBadRequest)
					return
				}
			}
			b := body
			if c.Rebase != "" {
				b = strings.ReplaceAll(b, c.Rebase, s.URL)
			}
			if c.Token != "" && r.Method == http.MethodGet &&
				r.Header.Get("Metadata-Token") != c.Token && r.Header.Get("X-Aws-Ec2-Metadata-Token") != c.Token {
				s.mu.Lock()
				s.missing = append(s.missing, r.RequestURI)
				s.mu.Unlock()
			}
			if status, ok := strings.CutPrefix(b, "!"); ok {
				n, _ := strconv.Atoi(status)
				w.WriteHeader(n)
				return
			}
			io.WriteString(w, b)
		}
	}
	s.Service = platformtest.NewService(t, routes)
	return s
}

// CheckCheckIn checks the requests the service received against what the
// case's mock matches on the check-in: every route asked, each with the
// headers and body substrings; source names the mock in failures.
func (s *Service) CheckCheckIn(t *testing.T, c Case, source string) {
	t.Helper()
	for route, want := range c.CheckIn {
		n := 0
		for _, r := range s.Requests() {
			if r.Route() != route {
				continue
			}
			n++
			for k, v := range want.Header {
				if !strings.Contains(r.Header.Get(k), v) {
					t.Errorf("%s: %s = %q, want %q (%s)", route, k, r.Header.Get(k), v, source)
				}
			}
			for _, b := range want.Body {
				if !strings.Contains(r.Body, b) {
					t.Errorf("%s: body without %q (%s):\n%s", route, b, source, r.Body)
				}
			}
		}
		if n == 0 {
			t.Errorf("check-in made no %s (%s)", route, source)
		}
	}
}
