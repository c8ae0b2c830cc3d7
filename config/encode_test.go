package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkWriteJSON fails unless WriteJSON writes cfg as json.Marshal does.
func checkWriteJSON(t *testing.T, what string, cfg Config) {
	t.Helper()
	want, err := json.Marshal(cfg)
	if err != nil {
		t.Fatalf("%s: json.Marshal: %v", what, err)
	}
	var got bytes.Buffer
	if err := cfg.WriteJSON(&got); err != nil {
		t.Fatalf("%s: WriteJSON: %v", what, err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%s: WriteJSON wrote\n%s\njson.Marshal writes\n%s", what, got.Bytes(), want)
	}
}

// eachValidConfig calls fn with every golden input and rule-table config
// that parses, and fails if fewer than 50 do (the corpus would say too
// little).
func eachValidConfig(t *testing.T, fn func(name string, cfg Config)) {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*", "*.ign"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	parsed := 0
	for _, p := range inputs {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if cfg, _, err := Parse(raw); err == nil {
			fn(p, cfg)
			parsed++
		}
	}
	for _, r := range ruleTable {
		for _, v := range r.vers {
			if cfg, _, err := Parse([]byte(strings.ReplaceAll(r.in, "$V", v.String()))); err == nil {
				fn(r.name+" "+v.String(), cfg)
				parsed++
			}
		}
	}
	if parsed < 50 {
		t.Fatalf("only %d configs parsed: the comparison covers too little", parsed)
	}
}

// TestWriteJSONMatchesMarshal compares WriteJSON with json.Marshal on every
// golden input and rule-table config that parses, and on configs built in
// Go with every field of the model set, or every list empty but not nil.
func TestWriteJSONMatchesMarshal(t *testing.T) {
	eachValidConfig(t, func(name string, cfg Config) { checkWriteJSON(t, name, cfg) })

	var full Config
	fill(reflect.ValueOf(&full).Elem(), "x<y>&z\"\\ é\u2028\n\x01\xff", true)
	checkWriteJSON(t, "every field set", full)
	var plain Config
	fill(reflect.ValueOf(&plain).Elem(), "/srv/a b+c=d_e,f:g;h", true)
	checkWriteJSON(t, "every field set, plain strings", plain)
	var empty Config
	fill(reflect.ValueOf(&empty).Elem(), "", false)
	checkWriteJSON(t, "every field zero, lists empty", empty)
	checkWriteJSON(t, "zero config", Config{})
}

// fill sets every field under v: strings to s, ints to 420, bools to true,
// pointers to new values, and lists to two elements (set) or to empty but
// not nil lists (not set, when the rest is left zero).
func fill(v reflect.Value, s string, set bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if set {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), s, set)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), s, set)
		}
	case reflect.Slice:
		n := 0
		if set {
			n = 2
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(v.Index(i), s, set)
		}
	case reflect.String:
		v.SetString(s)
	case reflect.Int:
		if set {
			v.SetInt(420)
		}
	case reflect.Bool:
		v.SetBool(set)
	}
}

// TestEncoderString compares the encoder's strings with json.Marshal's for
// every byte alone and inside plain text, and for characters it escapes.
func TestEncoderString(t *testing.T) {
	var cases []string
	for b := range 256 {
		cases = append(cases, string(rune(b)), string([]byte{byte(b)}), "ab"+string([]byte{byte(b)})+"cd")
	}
	cases = append(cases, "", "data:;base64,QUJD+/==", "\u2028\u2029", "é", "\U0001F600", "\xed\xa0\x80", "<script>&amp;</script>")
	for _, s := range cases {
		var buf bytes.Buffer
		e := encoder{w: bufio.NewWriter(&buf)}
		e.string(s)
		if err := e.w.Flush(); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want) {
			t.Errorf("encoder string %q = %s, json.Marshal gives %s", s, buf.String(), want)
		}
	}
}
