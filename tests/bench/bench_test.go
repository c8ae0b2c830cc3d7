// Package bench holds flint's performance benchmarks. run.sh times the
// flint binary as a whole process; the benchmarks here time the library
// in-process with `go test -bench`.
package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/butane"
)

// largeConfig generates the benchmark config with ./gen, once per run.
func largeConfig(b *testing.B) []byte {
	b.Helper()
	out := filepath.Join(b.TempDir(), "large.ign")
	if msg, err := exec.Command("go", "run", "./gen", "-o", out).CombinedOutput(); err != nil {
		b.Skipf("cannot generate the config: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkParseLarge parses and validates the 2.6 MB config of run.sh.
func BenchmarkParseLarge(b *testing.B) {
	raw := largeConfig(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, r, err := config.Parse(raw); err != nil {
			b.Fatalf("Parse(large config) = %v\n%s", err, r)
		}
	}
}

// BenchmarkTranslateButane translates the Butane config of butane.sh
// (2,000 files with inline contents) in-process.
func BenchmarkTranslateButane(b *testing.B) {
	out := filepath.Join(b.TempDir(), "large.bu")
	if msg, err := exec.Command("go", "run", "./genbutane", "-o", out).CombinedOutput(); err != nil {
		b.Skipf("cannot generate the config: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if res, err := butane.Translate(raw, butane.Options{}); err != nil {
			b.Fatalf("Translate(large config) = %v\n%s", err, res.Report)
		}
	}
}
