package kickstart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestExamples translates every example kickstart (each X.ks with an
// X.report beside it) at every spec version: the report must equal X.report
// at the newest stable version, the output must validate at each version,
// and no plaintext password may reach the report.
func TestExamples(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "kickstart")
	reports, err := filepath.Glob(filepath.Join(dir, "*.report"))
	if err != nil || len(reports) < 3 {
		t.Fatalf("examples: %d reports in %s (%v), want at least 3", len(reports), dir, err)
	}
	for _, rp := range reports {
		name := strings.TrimSuffix(filepath.Base(rp), ".report") + ".ks"
		t.Run(name, func(t *testing.T) {
			ks, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(rp)
			if err != nil {
				t.Fatal(err)
			}
			read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }
			for _, v := range config.SupportedVersions {
				res, err := Translate(name, ks, Options{Version: v, ReadFile: read})
				if err != nil && v == config.NewestStable {
					t.Errorf("Translate at %s: %v", v, err)
				}
				if _, _, rep, err := config.ParseDeclared(res.Config); err != nil || len(rep.Entries) > 0 {
					t.Errorf("the output at %s does not validate cleanly: %v\n%s", v, err, rep)
				}
				for _, secret := range []string{"changeme-on-first-login", "correct-horse"} {
					if strings.Contains(res.Report.String(), secret) {
						t.Errorf("the report at %s reveals %q", v, secret)
					}
				}
				if v == config.NewestStable && res.Report.String() != string(want) {
					t.Errorf("report of %s:\n%s\nwant (%s):\n%s", name, res.Report, rp, want)
				}
			}
		})
	}
}
