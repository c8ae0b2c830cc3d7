package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vincent-petithory/dataurl"
)

// addFuzzSeeds adds every conformance case (skipped quietly when the shared
// folder is absent), every golden input and every rule-table config.
func addFuzzSeeds(f *testing.F) {
	if cases, err := filepath.Glob(filepath.Join(conformanceDir(f), "cases", "*")); err == nil {
		for _, p := range cases {
			if raw, err := os.ReadFile(p); err == nil {
				f.Add(raw)
			}
		}
	}
	if inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*.ign")); err == nil {
		for _, p := range inputs {
			if raw, err := os.ReadFile(p); err == nil {
				f.Add(raw)
			}
		}
	}
	for _, r := range ruleTable {
		f.Add([]byte(strings.ReplaceAll(r.in, "$V", r.vers[0].String())))
	}
}

// FuzzParse checks, for any input:
//   - Parse does not panic;
//   - the error is nil exactly when the report has no errors;
//   - every entry has a message, a known severity and (for text that is not
//     empty) a line and a column;
//   - a config Parse accepts, marshalled with encoding/json, is accepted
//     again (as 3.7.0-experimental, the version the upgrade stamps) and
//     marshals to the same JSON: upgrading is a fixed point.
//
// One exception to re-acceptance is by design: below spec 3.3.0 a link
// needs no target, and the newest rules require one, so such a config is
// rejected when re-parsed, with exactly that complaint.
func FuzzParse(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, declared, rep, err := ParseDeclared(raw)
		checkParseResult(t, raw, rep, err)
		if err != nil {
			return
		}
		out, merr := json.Marshal(cfg)
		if merr != nil {
			t.Fatalf("json.Marshal(Parse(%q)) error = %v", raw, merr)
		}
		cfg2, rep2, err2 := Parse(out)
		checkParseResult(t, out, rep2, err2)
		if err2 != nil {
			if !declared.AtLeast(V3_3) && onlyMissingLinkTargets(rep2) {
				return
			}
			t.Fatalf("Parse(%q) accepted, but its upgraded form\n%s\nis rejected: %v\n%s", raw, out, err2, rep2)
		}
		// Canonical JSON gives the decoder nothing to report, so the
		// re-parse's entries are the checker's: the ones Validate finds
		// with the same newest rules on the same model.
		if got, want := withoutPositions(cfg.Validate()), withoutPositions(rep2); got != want {
			t.Fatalf("Validate(Parse(%q)) =\n%s\nwant the re-parse's\n%s", raw, got, want)
		}
		out2, merr := json.Marshal(cfg2)
		if merr != nil {
			t.Fatal(merr)
		}
		if string(out) != string(out2) {
			t.Fatalf("upgrade is not a fixed point for %q:\nfirst  %s\nsecond %s", raw, out, out2)
		}
	})
}

// checkParseResult checks the invariants of every Parse result.
func checkParseResult(t *testing.T, raw []byte, rep Report, err error) {
	t.Helper()
	if (err == nil) == rep.IsFatal() {
		t.Fatalf("Parse(%q) error = %v but report fatal = %v:\n%s", raw, err, rep.IsFatal(), rep)
	}
	if err != nil {
		known := false
		for _, sentinel := range []error{ErrEmpty, ErrSyntax, ErrInvalidVersion, ErrUnknownVersion, ErrInvalid} {
			known = known || errors.Is(err, sentinel)
		}
		if !known {
			t.Fatalf("Parse(%q) error = %v, wraps no sentinel", raw, err)
		}
	}
	for _, e := range rep.Entries {
		if e.Message == "" {
			t.Fatalf("Parse(%q): entry without a message: %+v", raw, e)
		}
		if e.Severity < SeverityError || e.Severity > SeverityInfo {
			t.Fatalf("Parse(%q): entry with severity %d", raw, e.Severity)
		}
		if !errors.Is(err, ErrEmpty) && (e.Line < 1 || e.Column < 1) {
			t.Fatalf("Parse(%q): entry without a position: %s", raw, e)
		}
	}
}

// onlyMissingLinkTargets reports whether every error in r is a link
// without a target.
func onlyMissingLinkTargets(r Report) bool {
	for _, e := range r.Entries {
		if e.Severity == SeverityError && e.Message != "link target is required" {
			return false
		}
	}
	return true
}

// withoutPositions renders a report without lines and columns.
func withoutPositions(r Report) string {
	var b strings.Builder
	for _, e := range r.Entries {
		e.Line, e.Column = 0, 0
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzDataURLFastPath checks the shortcut validate.go takes for plain
// base64 data URLs never accepts one that dataurl, which decides every
// other data URL, would reject: the shortcut must not change a verdict.
func FuzzDataURLFastPath(f *testing.F) {
	for _, s := range []string{
		"data:;base64,", "data:;base64,aGk=", "data:;base64,aGk", "data:;base64,a===", "data:;base64,QQ==QQ==",
		"data:;base64,+/+/", "data:;base64,aGk=\n", "data:;base64,%41", "data:text/plain;base64,aGk=", "data:,x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var c checker
		if c.plainBase64DataURL(s) {
			if _, err := dataurl.DecodeString(s); err != nil {
				t.Fatalf("plainBase64DataURL(%q) = true, but dataurl rejects it: %v", s, err)
			}
		}
	})
}
