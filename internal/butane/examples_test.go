package butane

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

var update = flag.Bool("update", false, "rewrite the expected outputs of TestExamples")

var versionLine = regexp.MustCompile(`(?m)^version: (\S+)$`)

// TestExamples translates every example of Butane's documentation
// (testdata/examples/*.bu, local files from testdata/files) at every fcos
// version from the one it declares on, and compares the config (as JSON)
// and the report with testdata/examples/NAME/VERSION.{json,report}. Each
// output is also a valid config of its version for flint's own parser.
func TestExamples(t *testing.T) {
	bus, err := filepath.Glob("testdata/examples/*.bu")
	if err != nil || len(bus) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, bu := range bus {
		src, err := os.ReadFile(bu)
		if err != nil {
			t.Fatal(err)
		}
		m := versionLine.FindSubmatch(src)
		if m == nil {
			t.Fatalf("%s: no version line", bu)
		}
		name := strings.TrimSuffix(filepath.Base(bu), ".bu")
		from := -1
		for i, p := range profiles {
			if p.variant == "fcos" && p.version == string(m[1]) {
				from = i
			}
		}
		if from < 0 {
			t.Fatalf("%s: version %s is not an fcos version", bu, m[1])
		}
		for _, p := range profiles[from:] {
			if p.variant != "fcos" {
				continue
			}
			t.Run(name+"/"+p.version, func(t *testing.T) {
				in := versionLine.ReplaceAll(src, []byte("version: "+p.version))
				res, err := Translate(in, Options{FilesDir: "testdata/files", Pretty: true})
				if err != nil {
					t.Fatalf("Translate(%s at %s) = %v\n%s", name, p.version, err, res.Report)
				}
				cfg, v, _, perr := config.ParseDeclared(res.Config)
				if perr != nil || v != p.target {
					t.Errorf("the output does not parse as a %s config: version %s, %v", p.target, v, perr)
				}
				_ = cfg
				base := filepath.Join("testdata/examples", name, p.version)
				if *update {
					if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
						t.Fatal(err)
					}
					writeGolden(t, base+".json", append(res.Config, '\n'))
					writeGolden(t, base+".report", []byte(res.Report.String()))
					return
				}
				want, err := os.ReadFile(base + ".json")
				if err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, res.Config, want) {
					t.Errorf("Translate(%s at %s) =\n%s\nwant\n%s", name, p.version, res.Config, want)
				}
				wantRep, err := os.ReadFile(base + ".report")
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Report.String(); got != string(wantRep) {
					t.Errorf("report of %s at %s =\n%s\nwant\n%s", name, p.version, got, wantRep)
				}
			})
		}
	}
}

func writeGolden(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonEqual compares two JSON documents as values, the way Butane's output
// is compared: key order and spacing do not matter.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestCheckResultPaths translates every example at every fcos version (the
// older ones refuse or warn about what they lack), once validating the
// model directly (config.ValidateAt) and once parsing the JSON written, and
// wants the same config and the same report from both.
func TestCheckResultPaths(t *testing.T) {
	bus, err := filepath.Glob("testdata/examples/*.bu")
	if err != nil || len(bus) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	compared, entries := 0, 0
	for _, bu := range bus {
		src, err := os.ReadFile(bu)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range profiles {
			if p.variant != "fcos" {
				continue
			}
			in := versionLine.ReplaceAll(src, []byte("version: "+p.version))
			opts := Options{FilesDir: "testdata/files"}
			direct, derr := Translate(in, opts)
			opts.checkByParse = true
			parsed, perr := Translate(in, opts)
			if (derr == nil) != (perr == nil) || !bytes.Equal(direct.Config, parsed.Config) ||
				direct.Report.String() != parsed.Report.String() {
				t.Errorf("%s at %s: validating the model gave %v\n%s\nparsing the JSON gave %v\n%s",
					bu, p.version, derr, direct.Report, perr, parsed.Report)
			}
			compared++
			entries += len(direct.Report.Entries)
		}
	}
	if entries == 0 {
		t.Errorf("%d translations compared, no report entry among them: the comparison shows nothing", compared)
	}
	t.Logf("%d translations compared, %d report entries", compared, entries)
}
