package config

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vincent-petithory/dataurl"
)

// addFuzzSeeds adds every conformance case, every golden input and every
// rule-table config. The seeds are in the repository, so a missing one is
// an error, not a quieter fuzz run.
func addFuzzSeeds(f *testing.F) {
	for _, pattern := range []string{
		filepath.Join(conformanceDir, "cases", "*.ign"),
		filepath.Join("testdata", "*", "*.ign"),
	} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			f.Fatalf("fuzz seeds: nothing matches %s (%v)", pattern, err)
		}
		for _, p := range paths {
			raw, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
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
//     marshals to the same JSON: upgrading is a fixed point;
//   - WriteJSON writes what json.Marshal does.
//
// Two exceptions to re-acceptance are by design, each rejected when
// re-parsed with exactly that complaint: below spec 3.3.0 a link needs no
// target, and below 3.1.0 a config to merge needs no source (Ignition's
// 3.0.0 rules; rendering fails on it), and the newest rules require them.
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
		var written bytes.Buffer
		if err := cfg.WriteJSON(&written); err != nil || !bytes.Equal(written.Bytes(), out) {
			t.Fatalf("WriteJSON(Parse(%q)) = %s, %v; json.Marshal gives %s", raw, written.Bytes(), err, out)
		}
		cfg2, rep2, err2 := Parse(out)
		checkParseResult(t, out, rep2, err2)
		if err2 != nil {
			if onlyRejectedByDesign(rep2, declared) {
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

// onlyRejectedByDesign reports whether every error in r is one the
// newest rules add for a config of the declared version: a link without a
// target (below 3.3.0), a config to merge without a source (below 3.1.0).
func onlyRejectedByDesign(r Report, declared Version) bool {
	for _, e := range r.Entries {
		if e.Severity != SeverityError {
			continue
		}
		switch {
		case !declared.AtLeast(V3_3) && e.Message == "link target is required":
		case !declared.AtLeast(V3_1) && e.Message == "source is required" && strings.HasPrefix(e.Path, "$.ignition.config.merge."):
		default:
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
// It also checks the shortcut, which decides without decoding, says yes
// to every plain base64 data URL that base64.StdEncoding decodes, and
// that url.Parse, which the shortcut skips, gives each the scheme data.
func FuzzDataURLFastPath(f *testing.F) {
	for _, s := range []string{
		"data:;base64,", "data:;base64,aGk=", "data:;base64,aGk", "data:;base64,a===", "data:;base64,QQ==QQ==",
		"data:;base64,+/+/", "data:;base64,aGk=\n", "data:;base64,%41", "data:text/plain;base64,aGk=", "data:,x",
		"data:;base64,AB==", "data:;base64,ABC=", "data:;base64,====", "data:;base64,AB=C", "data:;base64,QR==",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := plainBase64DataURL(s)
		if got {
			if _, err := dataurl.DecodeString(s); err != nil {
				t.Fatalf("plainBase64DataURL(%q) = true, but dataurl rejects it: %v", s, err)
			}
			if u, err := url.Parse(s); err != nil || u.Scheme != "data" {
				t.Fatalf("plainBase64DataURL(%q) = true, but url.Parse gives %v, %v", s, u, err)
			}
		}
		if want := decodesAsPlainBase64(s); got != want {
			t.Fatalf("plainBase64DataURL(%q) = %v, base64.StdEncoding says %v", s, got, want)
		}
	})
}

// decodesAsPlainBase64 is plainBase64DataURL by decoding: the prefix, then
// nothing but alphabet characters and '=' that base64.StdEncoding decodes.
func decodesAsPlainBase64(s string) bool {
	data, ok := strings.CutPrefix(s, "data:;base64,")
	if !ok || data == "" {
		return false
	}
	for i := 0; i < len(data); i++ {
		b := data[i]
		if !('A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '=') {
			return false
		}
	}
	_, err := base64.StdEncoding.DecodeString(data)
	return err == nil
}

// TestPlainBase64DataURL pins the padding and length rules of the shortcut.
func TestPlainBase64DataURL(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{"QUJD", true},
		{"AB==", true},
		{"ABC=", true},
		{"QR==", true}, // non-zero trailing bits: StdEncoding is not strict
		{"+/+/", true},
		{"QUJDAB==", true},
		{"", false},
		{"A===", false},
		{"====", false},
		{"=ABC", false},
		{"AB=C", false},
		{"A=BC", false},
		{"AB==QUJD", false},
		{"QQ==QQ==", false},
		{"A", false},
		{"AB", false},
		{"ABC", false},
		{"AB=", false},
		{"QUJDA", false},
		{"QUJD\n", false},
		{"QU JD", false},
		{"QU-_", false}, // URL alphabet
	} {
		s := "data:;base64," + tc.data
		if got := plainBase64DataURL(s); got != tc.want {
			t.Errorf("plainBase64DataURL(%q) = %v, want %v", s, got, tc.want)
		}
		if got := decodesAsPlainBase64(s); got != tc.want {
			t.Errorf("decoding %q says %v, the table %v: fix the table", s, got, tc.want)
		}
	}
	for _, s := range []string{"DATA:;base64,QUJD", "data:text/plain;base64,QUJD", "data:;BASE64,QUJD", "data:,QUJD"} {
		if plainBase64DataURL(s) {
			t.Errorf("plainBase64DataURL(%q) = true, want false: dataurl decides that form", s)
		}
	}
}
