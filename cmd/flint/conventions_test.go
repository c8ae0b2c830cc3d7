package main

import (
	"cmp"
	"debug/elf"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// familyDocPending are the packages whose doc does not yet name its family
// because another change is rewriting them; the sentence is added when it
// lands, and the test fails once a listed package has it, so the list only
// shrinks.
var familyDocPending = map[string]bool{
	"install": true, "resource": true, "plan": true, "stages/files": true,
}

// TestInternalFamilies keeps internal/README.md the map of internal/: every
// package is in exactly one family (a "## " section, its rows naming the
// package or a folder above it), every row names a folder that is there,
// and each package's doc says "Family: <section> (internal/README.md)."
func TestInternalFamilies(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "internal", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	families := map[string][]string{} // a row's folder → its sections
	section := ""
	for _, line := range strings.Split(string(readme), "\n") {
		if s, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.ToLower(strings.TrimSpace(s))
			continue
		}
		rest, ok := strings.CutPrefix(line, "| `")
		if !ok || section == "" {
			continue
		}
		dir, _, ok := strings.Cut(rest, "/` |")
		if !ok {
			t.Errorf("internal/README.md: row %q does not start with a folder", line)
			continue
		}
		families[dir] = append(families[dir], section)
		if fi, err := os.Stat(filepath.Join(root, "internal", dir)); err != nil || !fi.IsDir() {
			t.Errorf("internal/README.md names %s/ (in %s), which is not a folder of internal/", dir, section)
		}
	}
	pkgs := map[string]bool{}
	internal := filepath.Join(root, "internal")
	err = filepath.WalkDir(internal, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(internal, filepath.Dir(p))
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("no packages found under internal/")
	}
	for pkg := range pkgs {
		var in []string
		for p := pkg; ; {
			in = append(in, families[p]...)
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
		if len(in) != 1 {
			t.Errorf("internal/%s is in %d families of internal/README.md %v, want exactly one", pkg, len(in), in)
			continue
		}
		want := "Family: " + in[0] + " (internal/README.md)."
		astPkgs, err := parser.ParseDir(token.NewFileSet(), filepath.Join(internal, pkg), func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, ap := range astPkgs {
			for _, f := range ap.Files {
				if f.Doc != nil && strings.Contains(strings.Join(strings.Fields(f.Doc.Text()), " "), want) {
					has = true
				}
			}
		}
		switch {
		case !has && !familyDocPending[pkg]:
			t.Errorf("internal/%s: its package doc does not say %q", pkg, want)
		case has && familyDocPending[pkg]:
			t.Errorf("internal/%s: its package doc names its family: take it off familyDocPending", pkg)
		}
	}
}

// TestHelperPackagesOnlyInTests keeps the test-helper packages (a folder
// under internal/ named <something>test, internal/README.md) out of the
// binary: outside the helper packages themselves, only _test.go files may
// import one.
func TestHelperPackagesOnlyInTests(t *testing.T) {
	root := repoRoot(t)
	const module = "github.com/flintboot/flint/"
	isHelper := func(dir string) bool {
		rel, err := filepath.Rel(filepath.Join(root, "internal"), dir)
		return err == nil && !strings.HasPrefix(rel, "..") && rel != "." &&
			strings.HasSuffix(filepath.Base(dir), "test")
	}
	helpers := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
				return filepath.SkipDir
			}
			if isHelper(p) {
				helpers++
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || isHelper(filepath.Dir(p)) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if rest, ok := strings.CutPrefix(path, module); ok && isHelper(filepath.Join(root, filepath.FromSlash(rest))) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s imports the test helpers %s: only _test.go files may", rel, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if helpers == 0 {
		t.Fatal("no test-helper packages found under internal/")
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
	// GUIDs of partitions and disks (internal/gpt): parsing, and the
	// random version-4 ones sgdisk would pick; a few KiB.
	"github.com/google/uuid": true,
	// applehv: AF_VSOCK dialing with context cancellation (vsock, and
	// socket under it, which needs x/net/bpf, x/sync and x/sys); about
	// 90 KiB of binary against ~70 lines of raw socket code to keep.
	"github.com/mdlayher/vsock":  true,
	"github.com/mdlayher/socket": true,
	"golang.org/x/net":           true,
	"golang.org/x/sync":          true,
	"golang.org/x/sys":           true,
	// flint install (internal/install), measured on a stripped build: xz
	// (ulikunitz/xz, about 140 KB) and zstd (klauspost/compress, about
	// 250 KB) images. OpenPGP signatures of images are checked by the
	// system's gpg, as coreos-installer does: linking go-crypto (with
	// circl and x/crypto under it) cost 1,146,880 bytes, a tenth of the
	// binary, for a command only the live installer runs.
	"github.com/ulikunitz/xz":       true,
	"github.com/klauspost/compress": true,
	// YAML with line numbers, for cloud-config (and the agent's NoCloud
	// files): untrusted input, which a well-kept parser reads better
	// than a hand-written subset did. go.yaml.in/yaml/v3 is the YAML
	// organisation's maintained continuation of gopkg.in/yaml.v3. Butane
	// configs (flint translate, and at boot as Ignition 2.27 does) need it
	// too: the library Butane itself reads configs with, so scalars
	// resolve the same way.
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

// sizeBudget bounds the stripped binary that goes into every initramfs:
// 12 MiB, half of what it replaces there. Fedora CoreOS's initramfs carries
// Ignition (22 MiB as shipped, 15.7 MiB stripped) and Afterburn (8.0 MiB;
// both figures from coreos/coreos-installer issue 1773), so 15.7 + 8 MiB
// stripped, and flint does both jobs in one binary. It is a promise to
// distros: never raise it to make a test pass.
const sizeBudget = 12 << 20

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

// TestMakefileSizeBudget checks make release holds every architecture's
// binary to sizeBudget too.
func TestMakefileSizeBudget(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("\nSIZE_BUDGET    := %d\n", sizeBudget); !strings.Contains(string(mk), want) {
		t.Errorf("the Makefile's SIZE_BUDGET line is not %q; keep it equal to sizeBudget", strings.TrimSpace(want))
	}
}

// TestBinaryStaticAndSmall builds flint as the Makefile does (CGO_ENABLED=0,
// the Makefile's tags, -trimpath, -ldflags "-s -w") and checks it is
// static (no ELF interpreter: it runs in an initramfs without libc) and
// within its size budget. With -v it logs the size and what each feature
// adds (see featureSizes), then each module linked in, with its size and the
// features that use it (see moduleSizes).
func TestBinaryStaticAndSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildFlint(t, filepath.Join(dir, "flint"), "-s -w")
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
	t.Logf("flint binary: %.2f MiB stripped (budget %.1f MiB)", mib(fi.Size()), mib(sizeBudget))

	full := buildFlint(t, filepath.Join(dir, "flint-symbols"), "")
	g := linkGraph(t)
	perPkg, total := symbolBytes(t, full)
	for _, fs := range featureSizes(t, g, perPkg, total) {
		t.Logf("%-28s %7.0f KiB of symbols (%4.1f %%), about %.2f MiB of the stripped binary",
			fs.name, float64(fs.bytes)/1024, 100*fs.share, fs.share*mib(fi.Size()))
	}
	t.Logf("modules, each charged to the features that import it:")
	for _, ms := range moduleSizes(t, g, perPkg, total) {
		t.Logf("%-36s %7.0f KiB of symbols (%4.1f %%), about %.2f MiB: %s",
			ms.module, float64(ms.bytes)/1024, 100*ms.share, ms.share*mib(fi.Size()), ms.users)
	}
}

// buildFlint builds cmd/flint to out the way the Makefile does, with the
// given -ldflags, and returns out.
func buildFlint(t *testing.T, out, ldflags string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-tags", BuildTags, "-trimpath", "-ldflags", ldflags, "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags %q: %v\n%s", ldflags, err, b)
	}
	return out
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// features are the parts of flint a distro might ask the price of, each
// named by the package that is its root: the agent, the translators, the
// workstation and installer commands, and the config library under them
// all.
var features = []struct{ name, root string }{
	{"agent", "github.com/flintboot/flint/internal/agent"},
	{"platform layer", "github.com/flintboot/flint/internal/platform"},
	{"Butane translator", "github.com/flintboot/flint/internal/butane"},
	{"kickstart translator", "github.com/flintboot/flint/internal/kickstart"},
	{"cloud-config translator", "github.com/flintboot/flint/internal/cloudconfig"},
	{"flint plan", "github.com/flintboot/flint/internal/plan"},
	{"flint install", "github.com/flintboot/flint/internal/install"},
	{"config library", "github.com/flintboot/flint/config"},
}

// featureSize is what one feature adds to the binary.
type featureSize struct {
	name  string
	bytes int64   // symbol bytes of the packages only the feature brings in
	share float64 // bytes over all the symbol bytes of the binary
}

// featureSizes measures what each feature adds to the binary bin (built
// with its symbol table, otherwise as shipped). The method:
//
//  1. go list -deps gives the import graph of cmd/flint, with the tags and
//     CGO_ENABLED the binary is built with;
//  2. a feature's packages are its root and every package that is no
//     longer reachable from cmd/flint once the root is taken out of the
//     graph: what the binary would lose without the feature (a package
//     other code imports too, such as net/http, is not counted);
//  3. the ELF symbol table gives each function's and each data object's
//     size; a symbol belongs to the package its name starts with, and
//     symbols in sections that take no room in the file (.bss, .noptrbss)
//     are left out;
//  4. the feature's share is its symbols' bytes over all symbols' bytes,
//     and that share of the stripped binary is what it costs there (the
//     tables the runtime keeps per function grow with the code).
//
// It is a lower bound: code a feature alone uses inside a shared package
// (one more function of package strings) is counted as shared, and so is
// what the feature's subcommand adds to cmd/flint itself. Checked once
// against the truth, a build of cmd/flint without the subcommand's file
// (2026-12-01, 7.98 MiB in all): without the agent the binary was 356 KiB
// smaller, where this method said 0.24 MiB; without kickstart 216 KiB,
// where it said 0.23 MiB.
func featureSizes(t *testing.T, g graph, perPkg map[string]int64, total int64) []featureSize {
	t.Helper()
	imports, main := g.imports, g.main
	var sizes []featureSize
	for _, ft := range features {
		if _, ok := imports[ft.root]; !ok {
			t.Errorf("feature %s: cmd/flint does not link %s; keep features in step with the code", ft.name, ft.root)
			continue
		}
		kept := reachable(main, imports, ft.root)
		var n int64
		for pkg := range imports {
			if !kept[pkg] {
				n += perPkg[pkg]
			}
		}
		if n == 0 {
			t.Errorf("feature %s: no symbols found for %s and what only it imports", ft.name, ft.root)
		}
		sizes = append(sizes, featureSize{ft.name, n, float64(n) / float64(total)})
	}
	return sizes
}

// graph is cmd/flint's import graph as the binary is built (go list -deps,
// with its tags and CGO_ENABLED): each package's imports and module.
type graph struct {
	main    string
	imports map[string][]string
	module  map[string]string // "" for the standard library
}

func linkGraph(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", BuildTags, "-deps", "-f",
		"{{.ImportPath}} {{with .Module}}{{.Path}}{{else}}-{{end}}{{range .Imports}} {{.}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	g := graph{imports: map[string][]string{}, module: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g.imports[f[0]] = f[2:]
		if f[1] != "-" {
			g.module[f[0]] = f[1]
		}
		g.main = f[0] // go list -deps prints the package itself last
	}
	return g
}

// moduleSize is what one module's packages take in the binary, and which
// features import it.
type moduleSize struct {
	module string // "std" for the standard library
	bytes  int64
	share  float64
	users  string // the one feature it is charged to, or "shared by …"
}

// moduleSizes charges every module linked into the binary to the features
// that use it: a feature uses a module when one of the module's packages
// is among the feature root's own dependencies (its go list -deps, itself
// included). A module one feature uses is that feature's; a module several
// use is listed as shared among them; one no feature uses belongs to the
// rest of flint (the stages, the commands). Unlike featureSizes, which
// counts only what would go with a feature, this shows where each module's
// bytes are spent, yaml.v3 included.
func moduleSizes(t *testing.T, g graph, perPkg map[string]int64, total int64) []moduleSize {
	t.Helper()
	bytes := map[string]int64{}
	for pkg := range g.imports {
		m := g.module[pkg]
		if m == "" {
			m = "std"
		}
		bytes[m] += perPkg[pkg]
	}
	users := map[string][]string{}
	for _, ft := range features {
		deps := reachable(ft.root, g.imports, "")
		seen := map[string]bool{}
		for pkg := range deps {
			m := g.module[pkg]
			if m == "" {
				m = "std"
			}
			if !seen[m] {
				seen[m] = true
				users[m] = append(users[m], ft.name)
			}
		}
	}
	var sizes []moduleSize
	for m, n := range bytes {
		who := "the rest of flint (no feature imports it)"
		switch u := users[m]; {
		case len(u) == 1:
			who = u[0]
		case len(u) > 1:
			who = "shared by " + strings.Join(u, ", ")
		}
		sizes = append(sizes, moduleSize{m, n, float64(n) / float64(total), who})
	}
	slices.SortFunc(sizes, func(a, b moduleSize) int { return cmp.Compare(b.bytes, a.bytes) })
	if len(sizes) < 2 {
		t.Errorf("moduleSizes found %d modules in the binary, want flint's, the standard library's and its dependencies'", len(sizes))
	}
	return sizes
}

// reachable returns the packages reachable from main when without is
// taken out of the graph.
func reachable(main string, imports map[string][]string, without string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if p == without || seen[p] {
			return
		}
		seen[p] = true
		for _, q := range imports[p] {
			walk(q)
		}
	}
	walk(main)
	return seen
}

// symbolBytes sums the sizes of bin's symbols that take room in the file,
// per package (by symbolPackage), and over all symbols.
func symbolBytes(t *testing.T, bin string) (map[string]int64, int64) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	per := map[string]int64{}
	var total int64
	for _, s := range syms {
		if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) || f.Sections[s.Section].Type == elf.SHT_NOBITS {
			continue
		}
		total += int64(s.Size)
		per[symbolPackage(s.Name)] += int64(s.Size)
	}
	if total == 0 {
		t.Fatalf("%s has no symbols: was it stripped?", bin)
	}
	return per, total
}

// symbolPackage returns the import path a Go symbol name starts with:
// "github.com/x/y/z.(*T).M" → "github.com/x/y/z", "type:*net/http.Client"
// → "net/http", "strings.Cut[...]" → "strings".
func symbolPackage(name string) string {
	for _, p := range []string{"type:*", "type:", "go:itab.*", "go:itab."} {
		name = strings.TrimPrefix(name, p)
	}
	end := len(name)
	if i := strings.IndexAny(name, "([*"); i >= 0 {
		end = i
	}
	slash := strings.LastIndex(name[:end], "/")
	dot := strings.Index(name[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	return name[:slash+1+dot]
}
