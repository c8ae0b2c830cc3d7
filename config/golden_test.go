package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/<version>/")

// goldenResult is what a golden file holds: the version the input declares,
// the error (if any), every report entry, and the parsed and upgraded
// config (absent when the input is invalid).
type goldenResult struct {
	Declared string  `json:"declared"`
	Error    string  `json:"error,omitempty"`
	Report   []Entry `json:"report"`
	Config   *Config `json:"config,omitempty"`
}

// TestGolden parses every testdata/<version>/*.ign and compares the result
// with the .golden.json beside it, so that the behaviour of each old spec
// version stays frozen while the model moves on. Run
// `go test ./config -run Golden -update` to rewrite the golden files, then
// read the diff: a golden that pins a bug is a bug.
func TestGolden(t *testing.T) {
	seen := map[string]int{}
	for _, v := range SupportedVersions {
		dir := filepath.Join("testdata", v.String())
		inputs, err := filepath.Glob(filepath.Join(dir, "*.ign"))
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) == 0 {
			t.Errorf("no golden inputs in %s", dir)
		}
		for _, in := range inputs {
			seen[v.String()]++
			t.Run(v.String()+"/"+filepath.Base(in), func(t *testing.T) {
				raw, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				got := goldenOf(t, raw)
				if got.Declared != v.String() {
					t.Errorf("%s declares %q, want %s (it sits in %s)", in, got.Declared, v, dir)
				}
				out := strings.TrimSuffix(in, ".ign") + ".golden.json"
				if *updateGolden {
					if err := os.WriteFile(out, got.bytes, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(out)
				if err != nil {
					t.Fatalf("%v (run go test ./config -run Golden -update)", err)
				}
				if !bytes.Equal(got.bytes, want) {
					t.Errorf("Parse(%s) differs from %s (run with -update and review the diff):\n%s", in, out, lineDiff(string(want), string(got.bytes)))
				}
			})
		}
	}
	// Every version directory must exist: a missing one would leave a
	// version unfrozen without anyone noticing.
	for _, v := range SupportedVersions {
		if seen[v.String()] == 0 {
			t.Errorf("version %s has no golden tests", v)
		}
	}
}

type goldenOutput struct {
	goldenResult
	bytes []byte
}

// goldenOf parses raw and renders the golden file for it.
func goldenOf(t *testing.T, raw []byte) goldenOutput {
	t.Helper()
	cfg, declared, rep, err := ParseDeclared(raw)
	g := goldenResult{Report: rep.Entries}
	if g.Report == nil {
		g.Report = []Entry{}
	}
	if declared != (Version{}) {
		g.Declared = declared.String()
	}
	if err != nil {
		g.Error = err.Error()
	} else {
		g.Config = &cfg
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return goldenOutput{g, append(b, '\n')}
}

// lineDiff shows the first lines where want and got differ, enough to see
// what moved without a diff library.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		fmt.Fprintf(&b, "line %d:\n  - %s\n  + %s\n", i+1, wl, gl)
		if shown++; shown == 10 {
			b.WriteString("  …\n")
			break
		}
	}
	return b.String()
}
