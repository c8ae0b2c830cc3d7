package main

import (
	"debug/elf"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is two levels above cmd/flint.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestPackagesHaveDocComments enforces STYLE.md: every package says what it
// provides in a doc comment.
func TestPackagesHaveDocComments(t *testing.T) {
	root := repoRoot(t)
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dirs[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			documented := false
			for _, f := range pkg.Files {
				if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
					documented = true
				}
			}
			if !documented {
				rel, _ := filepath.Rel(root, dir)
				t.Errorf("package %s in %s has no doc comment", name, rel)
			}
		}
	}
}

// forbiddenModules are never to be linked into flint: it replaces them.
var forbiddenModules = []string{
	"github.com/coreos/ignition",
	"github.com/coreos/butane",
	"github.com/coreos/afterburn",
}

// allowedModules is the budget of third-party modules in the binary. Adding
// one is a decision: say why in the commit that extends this list.
var allowedModules = map[string]bool{
	"github.com/flintboot/flint":           true,
	"github.com/coreos/go-systemd/v22":     true, // unit file parsing, journal
	"github.com/vincent-petithory/dataurl": true, // data URLs, as the spec defines them
	// applehv: AF_VSOCK dialing with context cancellation (vsock, and
	// socket under it, which needs x/net/bpf, x/sync and x/sys); about
	// 90 KiB of binary against ~70 lines of raw socket code to keep.
	"github.com/mdlayher/vsock":  true,
	"github.com/mdlayher/socket": true,
	"golang.org/x/net":           true,
	"golang.org/x/sync":          true,
	"golang.org/x/sys":           true,
	// Butane configs, translated by flint translate and at boot as
	// Ignition 2.27 does: a YAML parser with node positions for the
	// reports. go.yaml.in/yaml/v3 is the YAML organisation's maintained
	// continuation of gopkg.in/yaml.v3, the library Butane itself reads
	// configs with, so scalars resolve the same way. It brings regexp
	// along; with the translator (every variant), 884 KiB of binary.
	"go.yaml.in/yaml/v3": true,
}

// TestBinaryDependencies guards what the flint binary links.
func TestBinaryDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	seen := map[string]bool{}
	for _, mod := range strings.Fields(string(out)) {
		if seen[mod] {
			continue
		}
		seen[mod] = true
		for _, bad := range forbiddenModules {
			if strings.HasPrefix(mod, bad) {
				t.Errorf("flint links %s: flint replaces it and must not depend on it", mod)
			}
		}
		if !allowedModules[mod] {
			t.Errorf("flint links %s, which is not in the dependency budget (allowedModules)", mod)
		}
	}
}

// sizeBudget bounds the stripped binary that goes into every initramfs. It
// was 7.98 MiB with the config library, the fetcher, every provider, the
// agent and the disks stage (built without HTTP/2), against a promise to
// distros of under 8 MiB. Reading Butane configs at boot (as Ignition 2.27
// does) needs a YAML parser in the initramfs: the parser, the regexp
// package it links and the translator (every Butane variant) add 884 KiB,
// 8.84 MiB in all, so the promise is now under 9 MiB. Never raise it to make a test pass: a raise
// is a decision about a feature, recorded here with its figures.
const sizeBudget = 9 << 20

// BuildTags are the Makefile's TAGS: the tags the shipped binary is built
// with (TestMakefileBuildTags keeps the two in step).
const BuildTags = "nethttpomithttp2"

// TestMakefileBuildTags checks the Makefile builds flint with BuildTags.
func TestMakefileBuildTags(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "\nTAGS     := "+BuildTags+"\n") {
		t.Errorf("the Makefile's TAGS line is not %q; keep BuildTags and the Makefile in step", BuildTags)
	}
}

// TestBinaryStaticAndSmall builds flint as the Makefile does and checks it is
// static (no ELF interpreter: it runs in an initramfs without libc) and
// within its size budget.
func TestBinaryStaticAndSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "flint")
	cmd := exec.Command("go", "build", "-tags", BuildTags, "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("flint is dynamically linked (has PT_INTERP); build with CGO_ENABLED=0")
		}
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > sizeBudget {
		t.Errorf("flint is %d bytes, over the budget of %d", fi.Size(), sizeBudget)
	}
	t.Logf("flint binary: %.1f MiB (budget %.1f MiB)", float64(fi.Size())/(1<<20), float64(sizeBudget)/(1<<20))
}
