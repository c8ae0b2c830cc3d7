package config

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceDir finds the shared conformance cases: $FLINT_CONFORMANCE_DIR,
// or ../shared/conformance beside the repository.
func conformanceDir(t testing.TB) string {
	if d := os.Getenv("FLINT_CONFORMANCE_DIR"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join("..", "..", "shared", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stricter lists the cases where flint deliberately rejects what the reference
// accepts (docs/validation.md explains each): flint's answer is pinned here.
var stricter = map[string]string{
	"unit-name-slash": "a unit name with '/' or '..' escapes /etc/systemd/system",
}

// caseFamily strips the version suffix: unit-name-slash-v3.0.0.ign → unit-name-slash.
func caseFamily(name string) string {
	base := strings.TrimSuffix(filepath.Base(name), ".ign")
	if i := strings.LastIndex(base, "-v"); i > 0 {
		return base[:i]
	}
	return base
}

// TestConformance checks that flint agrees with the reference validator on
// valid versus invalid for every recorded case, and warns wherever the
// reference warns.
func TestConformance(t *testing.T) {
	dir := conformanceDir(t)
	f, err := os.Open(filepath.Join(dir, "verdicts.tsv"))
	if os.IsNotExist(err) {
		t.Skipf("no conformance cases at %s (set FLINT_CONFORMANCE_DIR)", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, verdict, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		n++
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			_, r, err := Parse(raw)
			got := "ok"
			switch {
			case err != nil:
				got = "error"
			case r.HasWarnings():
				got = "warn"
			}
			if why, ok := stricter[caseFamily(name)]; ok {
				if got != "error" {
					t.Errorf("Parse(%s) = %s, want error: flint is stricter here (%s)\n%s", name, got, why, r)
				}
				return
			}
			switch {
			case verdict == "error" && got != "error",
				verdict != "error" && got == "error",
				verdict == "warn" && got != "warn":
				t.Errorf("Parse(%s) = %s, want %s (reference)\n%s", name, got, verdict, r)
			}
		})
	}
	if n == 0 {
		t.Fatalf("no cases in %s/verdicts.tsv", dir)
	}
}
