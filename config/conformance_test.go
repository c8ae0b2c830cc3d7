package config

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceDir holds the conformance cases that ship with the repository
// (testdata/conformance/README.md says where they come from).
const conformanceDir = "testdata/conformance"

// conformanceDirs lists the corpora TestConformance checks: the repository's
// own, always, then $FLINT_CONFORMANCE_DIR when set, a further directory of
// the same shape (a verdicts.tsv naming cases relative to it).
func conformanceDirs() []string {
	dirs := []string{conformanceDir}
	if d := os.Getenv("FLINT_CONFORMANCE_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	return dirs
}

// stricter lists the cases where flint deliberately rejects what Ignition
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
// reference warns. Missing cases fail the test: a checkout without them
// would pass while checking nothing.
func TestConformance(t *testing.T) {
	for _, dir := range conformanceDirs() {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			n := checkConformance(t, dir)
			if n == 0 {
				t.Fatalf("no cases in %s", filepath.Join(dir, "verdicts.tsv"))
			}
			t.Logf("%d cases from %s", n, dir)
		})
	}
}

// checkConformance runs the cases dir/verdicts.tsv lists and returns how
// many there were.
func checkConformance(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "verdicts.tsv"))
	if err != nil {
		t.Fatalf("conformance cases: %v", err)
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
			if DeclaresSpec2(raw) {
				// The reference validator reads spec 3.x only; flint
				// deliberately translates 2.x configs as Flatcar's
				// Ignition does (docs/validation.md), and every 2.x case
				// here is valid in its own spec.
				if got == "error" {
					t.Errorf("Parse(%s) = error, want the spec 2.x config translated (reference: %s, 3.x only)\n%s", name, verdict, r)
				}
				return
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
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", filepath.Join(dir, "verdicts.tsv"), err)
	}
	return n
}
