package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestParseRenderedMatchesEncodingJSON: for every valid config of the
// tests, rendered as the fetch stage writes its cache, ParseRendered gives
// exactly what encoding/json's Unmarshal gives (what the later stages
// used before), field for field.
func TestParseRenderedMatchesEncodingJSON(t *testing.T) {
	eachValidConfig(t, func(name string, cfg Config) {
		var cached bytes.Buffer
		if err := cfg.WriteJSON(&cached); err != nil {
			t.Fatal(err)
		}
		var want Config
		if err := json.Unmarshal(cached.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		got, err := ParseRendered(cached.Bytes())
		if err != nil {
			t.Errorf("%s: ParseRendered: %v", name, err)
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ParseRendered differs from encoding/json:\n got %+v\nwant %+v", name, got, want)
		}
	})
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
