package cloudconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestExamples translates cloud-init's own examples (testdata/cloud-init)
// at every spec version: each must translate (with errors at most), its
// output must validate, every error must name its line, and the closing
// count must add up. It logs how many translate without errors.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cloud-init", "cloud-config*.txt"))
	if err != nil || len(files) < 25 {
		t.Fatalf("examples: %d files (%v), want cloud-init's 28", len(files), err)
	}
	complete := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		for _, v := range config.SupportedVersions {
			res, err := Translate(name, data, Options{Version: v})
			if err != nil && !errors.Is(err, ErrUntranslatable) {
				t.Errorf("Translate(%s) at %s = %v", name, v, err)
				continue
			}
			if _, _, rep, perr := config.ParseDeclared(res.Config); perr != nil {
				t.Errorf("Translate(%s) at %s: the output does not validate: %v\n%s", name, v, perr, rep)
			}
			s := res.Report.Summary
			if s.Translated+s.Notes+len(s.Dropped) != s.Keys {
				t.Errorf("Translate(%s): summary %+v does not add up", name, s)
			}
			for _, e := range res.Report.Entries {
				if e.Severity == sevError && (e.Line == 0 || !strings.HasPrefix(e.File, name)) {
					t.Errorf("Translate(%s): an error without its line: %s", name, e)
				}
			}
			if (err == nil) != (len(s.Dropped) == 0) {
				t.Errorf("Translate(%s) = %v with dropped %v", name, err, s.Dropped)
			}
			if v == config.NewestStable && err == nil {
				complete++
			}
		}
	}
	t.Logf("%d of %d examples translate without errors", complete, len(files))
}
