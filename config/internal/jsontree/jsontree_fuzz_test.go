package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzJSONTree checks the parser against encoding/json:
//   - Parse never panics;
//   - Parse succeeds exactly when json.Valid accepts the input, except
//     that it refuses nesting deeper than MaxDepth (encoding/json's limit
//     is 10,000);
//   - when both accept it, a Reader reads what json.Unmarshal decodes (with
//     UseNumber; an object's last duplicate key wins, as in a Go map),
//     every offset points at the first byte of its key or value, and
//     Count agrees with More.
//
// Both reject a leading UTF-8 byte order mark (RFC 8259 §8.1 forbids
// generators to add one; encoding/json sees an invalid character). Both
// accept invalid UTF-8 inside strings and decode each bad byte, and each
// lone or mismatched \u surrogate, to U+FFFD; both reject it outside
// strings. So there is no other difference to except: the two agree on
// every input, the parser only adds positions and keeps duplicate keys.
func FuzzJSONTree(f *testing.F) {
	for _, s := range []string{
		``, ` `, `null`, `true`, `-0.5e+3`, `"a\u00e9\ud83d\ude00"`, `"\ud800"`, "\"\xff\"",
		`[1,[2,[3]]]`, `{"a":1,"a":{"b":[true,null]}}`, "\ufeff{}", `[1,]`, `{"a":1,}`, `01`,
		`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","mode":420}]}}`,
	} {
		f.Add([]byte(s))
	}
	// The config package's inputs are realistic documents: its golden
	// inputs and conformance cases.
	for _, pattern := range []string{"../../testdata/*/*.ign", "../../testdata/conformance/cases/*.ign"} {
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
	f.Fuzz(func(t *testing.T, src []byte) {
		d, err := Parse(src)
		valid := json.Valid(src)
		if valid && nesting(src) > MaxDepth {
			// encoding/json allows 10,000 levels: the one difference.
			var se *SyntaxError
			if !errors.As(err, &se) || se.Msg != fmt.Sprintf("nesting deeper than %d levels", MaxDepth) {
				t.Fatalf("Parse(%.40q…) error = %v, want the depth limit", src, err)
			}
			return
		}
		if (err == nil) != valid {
			t.Fatalf("Parse(%q) error = %v, but json.Valid = %v", src, err, valid)
		}
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok || se.Line < 1 || se.Column < 1 || se.Offset < 0 || se.Offset > len(src) || se.Msg == "" {
				t.Fatalf("Parse(%q) error = %#v, want a positioned syntax error", src, err)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(src))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("json.Decode(%q) error = %v after json.Valid", src, err)
		}
		if got := plain(root(t, d)); !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q) = %#v, encoding/json decodes %#v", src, got, want)
		}
		checkOffsets(t, src, root(t, d))
	})
}

// nesting returns how deeply arrays and objects nest in src, which
// json.Valid accepted.
func nesting(src []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range src {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// plain converts a tree to what encoding/json decodes into an any.
func plain(v *node) any {
	switch v.Kind {
	case Null:
		return nil
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.Str)
	case String:
		return v.Str
	case Array:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = plain(e)
		}
		return out
	default:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = plain(m.Value)
		}
		return out
	}
}

func checkOffsets(t *testing.T, src []byte, v *node) {
	t.Helper()
	first := map[Kind]string{Null: "n", Bool: "tf", Number: "-0123456789", String: `"`, Array: "[", Object: "{"}[v.Kind]
	if v.Offset < 0 || v.Offset >= len(src) || !bytes.ContainsRune([]byte(first), rune(src[v.Offset])) {
		t.Fatalf("%s value at offset %d of %q", v.Kind, v.Offset, src)
	}
	for _, e := range v.Elems {
		checkOffsets(t, src, e)
	}
	for _, m := range v.Members {
		if m.KeyOffset < 0 || m.KeyOffset >= len(src) || src[m.KeyOffset] != '"' {
			t.Fatalf("key %q at offset %d of %q", m.Key, m.KeyOffset, src)
		}
		checkOffsets(t, src, m.Value)
	}
}

// TestFuzzSeedsAgree runs the fuzz property on hand-picked inputs where
// encoding/json has its own opinions, so a plain `go test` checks them.
func TestFuzzSeedsAgree(t *testing.T) {
	for _, s := range []string{
		"\"\xed\xa0\x80\"", "\"\\ud800\\udc00\"", "\"\\udbff\\udfff\"", "\"\\ud800\\u0041\"",
		"\"\\uDEAD\"", "[\"\xc0\xaf\"]", "\"\xf4\x90\x80\x80\"", "1E400", "-1e-400", "[1e999999999999]",
	} {
		d, err := Parse([]byte(s))
		if err != nil || !json.Valid([]byte(s)) {
			t.Errorf("Parse(%q) error = %v, json.Valid = %v; want both to accept", s, err, json.Valid([]byte(s)))
			continue
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := plain(root(t, d)); fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Errorf("Parse(%q) = %#v, encoding/json decodes %#v", s, got, want)
		}
	}
}
