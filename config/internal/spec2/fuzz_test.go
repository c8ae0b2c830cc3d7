package spec2

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzTranslate checks that any JSON document either translates to a JSON
// 3.x config or is refused with an error entry, and never panics.
func FuzzTranslate(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/spec2/docs/*.ign")
	for _, s := range seeds {
		raw, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"a","path":"/sysroot/a"}],"files":[{"filesystem":"a","path":"/x","append":true},{"filesystem":"a","path":"/x","append":true}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the config library refuses it before translation
		}
		res, err := Translate(raw)
		if err != nil {
			for _, e := range res.Entries {
				if e.Error {
					return
				}
			}
			t.Fatalf("Translate(%q) error = %v with no error entry", raw, err)
		}
		var out struct {
			Ignition struct{ Version string }
		}
		if err := json.Unmarshal(res.JSON, &out); err != nil || !strings.HasPrefix(out.Ignition.Version, "3.") {
			t.Fatalf("Translate(%q) = %s (%v), want a 3.x config", raw, res.JSON, err)
		}
	})
}
