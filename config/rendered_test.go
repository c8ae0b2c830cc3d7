package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestParseRenderedMatchesEncodingJSON: for every config in testdata,
// rendered as the fetch stage writes its cache, ParseRendered gives
// exactly what encoding/json's Unmarshal gives (what the later stages
// used before), field for field.
func TestParseRenderedMatchesEncodingJSON(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.ign")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata configs: %v", err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := Parse(raw)
		if err != nil {
			continue // an invalid config is never rendered
		}
		n++
		cached, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var want Config
		if err := json.Unmarshal(cached, &want); err != nil {
			t.Fatal(err)
		}
		got, err := ParseRendered(cached)
		if err != nil {
			t.Errorf("%s: ParseRendered: %v", f, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ParseRendered differs from encoding/json:\n got %+v\nwant %+v", f, got, want)
		}
	}
	if n < 10 {
		t.Fatalf("only %d valid configs in testdata: the test checks too little", n)
	}
}

func TestParseRenderedRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, raw string
		want      error
	}{
		{"syntax", `{"ignition":`, ErrSyntax},
		{"older version", `{"ignition":{"version":"3.4.0"}}`, ErrInvalidVersion},
		{"no version", `{}`, ErrInvalidVersion},
		{"unknown key", `{"ignition":{"version":"3.7.0-experimental"},"storage":{"filez":[]}}`, ErrInvalid},
		{"wrong type", `{"ignition":{"version":"3.7.0-experimental"},"storage":{"files":[{"path":1}]}}`, ErrInvalid},
	} {
		if _, err := ParseRendered([]byte(tt.raw)); !errors.Is(err, tt.want) {
			t.Errorf("%s: ParseRendered = %v, want %v", tt.name, err, tt.want)
		}
	}
}
