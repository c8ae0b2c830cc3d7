package agent

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/platform"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// afterburnMock is one platform's file in testdata/afterburn: the
// documents coreos/afterburn's src/providers/<platform>/mock_tests.rs
// serves (at 790aa94), and what those tests assert.
type afterburnMock struct {
	Source string `json:"source"`
	Cases  []struct {
		Name string `json:"name"`
		// Routes answer "METHOD /path" with a body; "!403" answers that
		// status instead. Other requests get 404.
		Routes map[string]string `json:"routes"`
		// Token, when set, must be on every GET (Akamai's Metadata-Token,
		// AWS's IMDSv2 token), as the mocks match it.
		Token string `json:"token"`
		// Rebase is the address the documents name (WireServer's URLs in
		// Azure's goal state): the fake serves them, so it is replaced by
		// the fake's address in every body, as the mocks' client does
		// with mock_base_url.
		Rebase     string            `json:"rebase"`
		Hostname   *string           `json:"hostname"`
		AdminUser  *string           `json:"adminUser"`
		Keys       []string          `json:"keys"`
		Attributes map[string]string `json:"attributes"`
		// CheckIn, when set, runs the check-in and checks what the mock
		// matches on its requests: by route, headers and substrings of
		// the body.
		CheckIn map[string]struct {
			Header map[string]string `json:"header"`
			Body   []string          `json:"body"`
		} `json:"checkIn"`
	} `json:"cases"`
}

// azureIMDSFieldPrefix is where Afterburn asks Azure's IMDS one field at
// a time; flint reads the whole instance document.
const azureIMDSFieldPrefix = "GET /metadata/instance/"

// azureInstanceDocument serves both shapes: it builds the instance
// document flint asks for (/metadata/instance) from the field routes of
// Afterburn's mocks (/metadata/instance/compute/name?…&format=text), each
// field at its path; a body that is JSON (publicKeys) is kept as JSON.
func azureInstanceDocument(t *testing.T, routes map[string]string) string {
	doc := map[string]any{}
	for route, body := range routes {
		rest, ok := strings.CutPrefix(route, azureIMDSFieldPrefix)
		if !ok {
			continue
		}
		path, _, _ := strings.Cut(rest, "?")
		parts := strings.Split(path, "/")
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

// TestAfterburnMockDocuments feeds the agent the documents of Afterburn's
// mock tests and checks the hostname, keys and attributes those tests
// assert. Attributes flint writes besides must be marked flint's own in
// afterburnNames.
func TestAfterburnMockDocuments(t *testing.T) {
	files, err := filepath.Glob("testdata/afterburn/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/afterburn files: %v", err)
	}
	for _, file := range files {
		id := strings.TrimSuffix(filepath.Base(file), ".json")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var mock afterburnMock
		if err := json.Unmarshal(data, &mock); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, c := range mock.Cases {
			t.Run(id+"/"+c.Name, func(t *testing.T) {
				var missing []string
				var f *platformtest.Service
				routes := map[string]http.HandlerFunc{}
				bodies := c.Routes
				if id == "azure" {
					bodies = maps.Clone(c.Routes)
					bodies["GET /metadata/instance?api-version=2021-02-01"] = azureInstanceDocument(t, c.Routes)
				}
				for route := range c.CheckIn {
					// The check-in's own requests are accepted with an
					// empty answer, as the mocks' are.
					if _, ok := bodies[route]; !ok {
						bodies = maps.Clone(bodies)
						bodies[route] = ""
					}
				}
				for route, body := range bodies {
					routes[route] = func(w http.ResponseWriter, r *http.Request) {
						if strings.HasPrefix(id, "azure") && (strings.HasPrefix(route, "GET /metadata/") || strings.HasPrefix(route, "GET /Microsoft.Compute/")) {
							// Afterburn's mocks match the header IMDS requires.
							if r.Header.Get("Metadata") != "true" {
								http.Error(w, "Required metadata header not specified", http.StatusBadRequest)
								return
							}
						}
						if c.Rebase != "" {
							body = strings.ReplaceAll(body, c.Rebase, f.URL)
						}
						if c.Token != "" && r.Method == http.MethodGet &&
							r.Header.Get("Metadata-Token") != c.Token && r.Header.Get("X-Aws-Ec2-Metadata-Token") != c.Token {
							missing = append(missing, r.RequestURI)
						}
						if status, ok := strings.CutPrefix(body, "!"); ok {
							n, _ := strconv.Atoi(status)
							w.WriteHeader(n)
							return
						}
						io.WriteString(w, body)
					}
				}
				f = platformtest.NewService(t, routes)
				a := newTestAgent(t, id, f.URL, t.TempDir())
				ctx := context.Background()
				if c.CheckIn != nil {
					if err := a.platform.CheckIn(ctx, a.host()); err != nil {
						t.Fatalf("check-in (%s): %v", mock.Source, err)
					}
					for route, want := range c.CheckIn {
						n := 0
						for _, r := range f.Requests() {
							if r.Method+" "+r.URI != route {
								continue
							}
							n++
							for k, v := range want.Header {
								if !strings.Contains(r.Header.Get(k), v) {
									t.Errorf("%s: %s = %q, want %q (%s)", route, k, r.Header.Get(k), v, mock.Source)
								}
							}
							for _, s := range want.Body {
								if !strings.Contains(r.Body, s) {
									t.Errorf("%s: body without %q (%s):\n%s", route, s, mock.Source, r.Body)
								}
							}
						}
						if n == 0 {
							t.Errorf("check-in made no %s (%s)", route, mock.Source)
						}
					}
					return
				}
				// Where the hostname is apart (Azure Stack's identity
				// endpoint), a hostname-only case asks only for it.
				var m platform.Metadata
				var err error
				if a.platform.HostnameOnly == nil || c.Keys != nil || c.Attributes != nil || c.AdminUser != nil {
					if m, err = a.fetchMetadata(ctx, "test"); err != nil {
						t.Fatalf("metadata (%s): %v", mock.Source, err)
					}
				}
				if a.platform.HostnameOnly != nil && c.Hostname != nil {
					if m.Hostname, err = a.platform.HostnameOnly(ctx, a.host()); err != nil {
						t.Fatalf("hostname (%s): %v", mock.Source, err)
					}
				}
				if c.AdminUser != nil && m.AdminUser != *c.AdminUser {
					t.Errorf("admin user = %q, want %q (%s)", m.AdminUser, *c.AdminUser, mock.Source)
				}
				if a.platform.Attributes != nil {
					more, err := a.platform.Attributes(ctx, a.host())
					if err != nil && c.Attributes != nil {
						t.Fatalf("attributes (%s): %v", mock.Source, err)
					}
					m.Attrs = append(m.Attrs, more...)
				}
				if c.Hostname != nil && m.Hostname != *c.Hostname {
					t.Errorf("hostname = %q, want %q (%s)", m.Hostname, *c.Hostname, mock.Source)
				}
				if c.Keys != nil {
					keys := slices.Compact(slices.DeleteFunc(m.Keys, func(k string) bool { return strings.TrimSpace(k) == "" }))
					if !slices.Equal(keys, c.Keys) {
						t.Errorf("keys = %q, want %q (%s)", keys, c.Keys, mock.Source)
					}
					if err := checkAuthorizedKeys(keys); err != nil {
						t.Errorf("keys refused: %v", err)
					}
				}
				if c.Attributes != nil {
					got := map[string]string{}
					for _, at := range m.Attrs {
						got[at.Name] = at.Value
					}
					for k, v := range c.Attributes {
						if got[k] != v {
							t.Errorf("%s = %q, want %q (%s)", k, got[k], v, mock.Source)
						}
					}
					for k := range got {
						if _, ok := c.Attributes[k]; !ok && !flintOnlyName(id, k) {
							t.Errorf("%s written, which %s does not expect and is not marked flint's own", k, mock.Source)
						}
					}
				}
				if len(missing) > 0 {
					t.Errorf("requests without the token: %q", missing)
				}
			})
		}
	}
}

// flintOnlyName reports an attribute afterburnNames marks as flint's own,
// named as flint's own (FLINT_…, never written as AFTERBURN_…).
func flintOnlyName(id, name string) bool {
	name, own := strings.CutPrefix(name, platform.FlintOnlyPrefix)
	if !own {
		return false
	}
	for _, row := range afterburnNames {
		if row.id != id {
			continue
		}
		n := strings.TrimPrefix(name, strings.ToUpper(id)+"_")
		if i := strings.LastIndexByte(n, '_'); i >= 0 {
			if _, err := strconv.Atoi(n[i+1:]); err == nil {
				n = n[:i] + "_n"
			}
		}
		return slices.Contains(row.flintOnly, n)
	}
	return false
}
