package fetch

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestMergeOverEmptyBaseIsIdentity backs merge's shortcut: without base
// configs, merging the user config over config.Empty yields the user config
// itself, so merge skips it (a deep copy of a config that may hold
// thousands of files).
func TestMergeOverEmptyBaseIsIdentity(t *testing.T) {
	paths, err := filepath.Glob("../../../config/testdata/*/*.ign")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test configs: %v", err)
	}
	parsed := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := config.Parse(raw)
		if err != nil {
			continue // invalid on purpose
		}
		parsed++
		if got := config.Merge(config.Empty(), cfg); !reflect.DeepEqual(got, cfg) {
			t.Errorf("%s: Merge(config.Empty(), cfg) differs from cfg:\n%+v\n%+v", p, got, cfg)
		}
	}
	if parsed == 0 {
		t.Fatalf("none of %d test configs parses", len(paths))
	}
	t.Logf("%d configs", parsed)
}
