package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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
		Token      string            `json:"token"`
		Hostname   *string           `json:"hostname"`
		Keys       []string          `json:"keys"`
		Attributes map[string]string `json:"attributes"`
	} `json:"cases"`
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
				routes := map[string]http.HandlerFunc{}
				for route, body := range c.Routes {
					routes[route] = func(w http.ResponseWriter, r *http.Request) {
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
				f := newFakeService(t, routes)
				a := newTestAgent(t, id, f.srv.URL, t.TempDir())
				ctx := context.Background()
				m, err := a.fetchMetadata(ctx, "test")
				if err != nil {
					t.Fatalf("metadata (%s): %v", mock.Source, err)
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

// flintOnlyName reports an attribute afterburnNames marks as flint's own.
func flintOnlyName(id, name string) bool {
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
