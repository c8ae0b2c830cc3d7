package platform

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPlatformTable(t *testing.T) {
	ids := IDs()
	if len(ids) != 31 {
		t.Errorf("IDs() has %d platforms, want Ignition's 31", len(ids))
	}
	if !slices.IsSorted(ids) {
		t.Errorf("IDs() = %q, want them sorted (Lookup searches them)", ids)
	}
	for _, id := range ids {
		p, ok := Lookup(id)
		if !ok || p.ID != id || p.New == nil {
			t.Errorf("Lookup(%q) = %+v, %v; want the platform", id, p, ok)
		}
		if prov := p.New(Env{Root: t.TempDir()}); prov == nil {
			t.Errorf("Lookup(%q).New(Env{}) = nil, want a provider", id)
		}
	}
	if _, ok := Lookup("nonesuch"); ok {
		t.Errorf("Lookup(nonesuch) found a platform")
	}
}

// TestProvidersDocumented checks docs/providers.md has a row for every id.
func TestProvidersDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "providers.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range IDs() {
		if !strings.Contains(string(doc), "| "+id+" |") {
			t.Errorf("docs/providers.md has no row for %s", id)
		}
	}
}
