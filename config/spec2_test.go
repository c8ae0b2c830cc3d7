package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// spec2DocsDir holds the spec 2.x examples of Ignition 0.x's and Flatcar's
// documentation (README.md there says which), each with the 3.x config its
// translation must give (NAME.json) or the refusal it must meet (NAME.err,
// one expected report line fragment a line).
const spec2DocsDir = "testdata/spec2/docs"

// TestSpec2DocExamples translates every documented 2.x example, compares
// the result with the expected 3.x config, and checks that the 2.x config
// parses to the same model as its translation. `go test ./config -run
// Spec2DocExamples -update` writes the .json files of new examples; review
// them against docs/spec2.md before committing.
func TestSpec2DocExamples(t *testing.T) {
	ins, err := filepath.Glob(filepath.Join(spec2DocsDir, "*.ign"))
	if err != nil || len(ins) == 0 {
		t.Fatalf("no examples in %s (%v)", spec2DocsDir, err)
	}
	for _, in := range ins {
		base := strings.TrimSuffix(in, ".ign")
		t.Run(filepath.Base(base), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, rep, err := TranslateSpec2(raw)
			if refusal, rerr := os.ReadFile(base + ".err"); rerr == nil {
				if err == nil {
					t.Fatalf("TranslateSpec2(%s) = %s, want a refusal", in, out)
				}
				for _, want := range strings.Split(strings.TrimSpace(string(refusal)), "\n") {
					if !strings.Contains(rep.String(), want) {
						t.Errorf("TranslateSpec2(%s) report =\n%s\nwant a line containing %q", in, rep, want)
					}
				}
				if _, _, perr := Parse(raw); !errors.Is(perr, ErrInvalid) && !errors.Is(perr, ErrUnknownVersion) {
					t.Errorf("Parse(%s) error = %v, want the translation's refusal", in, perr)
				}
				return
			}
			if err != nil {
				t.Fatalf("TranslateSpec2(%s) error = %v\n%s", in, err, rep)
			}
			if *updateGolden {
				var b bytes.Buffer
				if err := json.Indent(&b, out, "", "  "); err != nil {
					t.Fatal(err)
				}
				b.WriteByte('\n')
				if err := os.WriteFile(base+".json", b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(base + ".json")
			if err != nil {
				t.Fatalf("%v (write it, or run with -update and review it)", err)
			}
			var g, w any
			if err := json.Unmarshal(out, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatalf("%s: %v", base+".json", err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("TranslateSpec2(%s) =\n%s\nwant %s:\n%s", in, out, base+".json", want)
			}
			fromV2, _, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%s) error = %v", in, err)
			}
			fromV3, _, err := Parse(want)
			if err != nil {
				t.Fatalf("Parse(%s) error = %v", base+".json", err)
			}
			if !reflect.DeepEqual(fromV2, fromV3) {
				t.Errorf("Parse(%s) = %+v, want the model of %s: %+v", in, fromV2, base+".json", fromV3)
			}
		})
	}
}

// TestSpec2ReportPositions checks that a problem the 3.x rules find in the
// translation is reported at the 2.x value it came from.
func TestSpec2ReportPositions(t *testing.T) {
	in := "{\"ignition\":{\"version\":\"2.2.0\"},\n" +
		"\"storage\":{\"files\":[{\"filesystem\":\"root\",\"path\":\"/a\",\"mode\":420,\n" +
		"  \"contents\":{\"source\":\"ftp://x/y\"}}]}}"
	_, v, rep, err := ParseDeclared([]byte(in))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseDeclared error = %v, want ErrInvalid\n%s", err, rep)
	}
	if v != (Version{2, 2, 0, ""}) {
		t.Errorf("ParseDeclared version = %v, want 2.2.0", v)
	}
	want := Entry{Severity: SeverityError, Path: "$.storage.files.0.contents.source", Line: 3, Column: 24}
	for _, e := range rep.Entries {
		if e.Path == want.Path && e.Line == want.Line && e.Column == want.Column && e.Severity == want.Severity &&
			strings.HasSuffix(e.Message, "(in the spec 3.x translation)") {
			return
		}
	}
	t.Errorf("ParseDeclared report =\n%s\nwant an error at %s, line %d col %d, from the 3.x rules", rep, want.Path, want.Line, want.Column)
}

// TestTranslateSpec2RefusesSpec3 checks that a 3.x config is not taken for
// a 2.x one.
func TestTranslateSpec2RefusesSpec3(t *testing.T) {
	if _, _, err := TranslateSpec2([]byte(`{"ignition":{"version":"3.4.0"}}`)); !errors.Is(err, ErrInvalidVersion) {
		t.Errorf("TranslateSpec2(3.4.0) error = %v, want ErrInvalidVersion", err)
	}
	if DeclaresSpec2([]byte(`{"ignition":{"version":"3.4.0"}}`)) || !DeclaresSpec2([]byte(`{"ignition":{"version":"2.0.0"}}`)) {
		t.Error("DeclaresSpec2 does not tell 2.x from 3.x")
	}
}

// TestDeclaresSpec2 checks the answers with and without a parse: only a
// JSON object, after JSON's whitespace, can declare a 2.x version.
func TestDeclaresSpec2(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{`{"ignition":{"version":"2.3.0"}}`, true},
		{" \t\r\n{\"ignition\":{\"version\":\"2.1.0\"}}", true},
		{`{"ignition":{"version":"3.0.0"}}`, false},
		{"variant: fcos\nversion: 1.5.0\nignition:\n  version: 2.0.0\n", false},
		{"ignition: {version: 2.0.0}\n", false},
		{`["ignition"]`, false},
		{"", false},
		{" \n", false},
	} {
		if got := DeclaresSpec2([]byte(tc.raw)); got != tc.want {
			t.Errorf("DeclaresSpec2(%q) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}
