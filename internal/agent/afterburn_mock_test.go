//go:build unix

package agent

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/agent/afterburntest"
	"github.com/flintboot/flint/internal/platform"
)

// TestAfterburnMockDocuments feeds the agent the documents of Afterburn's
// mock tests and checks the hostname, keys and attributes those tests
// assert. Attributes flint writes besides must be marked flint's own in
// afterburnNames.
func TestAfterburnMockDocuments(t *testing.T) {
	for _, mock := range afterburntest.Mocks(t) {
		id := mock.ID
		for _, c := range mock.Cases {
			t.Run(id+"/"+c.Name, func(t *testing.T) {
				f := afterburntest.Serve(t, id, c)
				a := newTestAgent(t, id, f.URL, t.TempDir())
				ctx := context.Background()
				if c.CheckIn != nil {
					if err := a.platform.CheckIn(ctx, a.host()); err != nil {
						t.Fatalf("check-in (%s): %v", mock.Source, err)
					}
					f.CheckCheckIn(t, c, mock.Source)
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
				if missing := f.MissingToken(); len(missing) > 0 {
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
