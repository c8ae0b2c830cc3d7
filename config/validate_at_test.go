package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestValidateAtMatchesParse checks ValidateAt against what it replaces:
// every config of testdata (the golden inputs and the conformance cases,
// valid and invalid), read leniently into the model, at every version, is
// written with WriteJSON and parsed; where ValidateAt answers, its entries
// must be Parse's, in order, but for the lines and columns.
func TestValidateAtMatchesParse(t *testing.T) {
	var inputs []string
	for _, glob := range []string{"testdata/3.*/*.ign", "testdata/conformance/cases/*.ign"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, m...)
	}
	if len(inputs) < 100 {
		t.Fatalf("found %d configs in testdata, want the golden inputs and the conformance cases", len(inputs))
	}
	answered, declined, findings := 0, 0, 0
	for _, in := range inputs {
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var cfg Config
		if json.Unmarshal(raw, &cfg) != nil {
			continue // not JSON, or a value of the wrong type: no model to check
		}
		for _, v := range SupportedVersions {
			cfg.Ignition.Version = v.String()
			var buf bytes.Buffer
			if err := cfg.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			_, want, _ := Parse(buf.Bytes())
			got, ok := cfg.ValidateAt(v)
			if !ok {
				declined++
				continue
			}
			answered++
			findings += len(got.Entries)
			for i := range want.Entries {
				want.Entries[i].Line, want.Entries[i].Column = 0, 0
			}
			if !slices.Equal(got.Entries, want.Entries) {
				t.Errorf("%s at %s:\nValidateAt: %+v\nParse:      %+v", in, v, got.Entries, want.Entries)
			}
		}
	}
	// The comparison means something only if both kinds of answer and
	// findings occur.
	if answered < 1000 || declined == 0 || findings < 500 {
		t.Errorf("answered %d, declined %d, %d findings: the testdata no longer exercises ValidateAt", answered, declined, findings)
	}
	t.Logf("answered %d, declined %d, %d findings compared", answered, declined, findings)
}

// TestValidateAtDeclines checks the two cases ValidateAt leaves to Parse.
func TestValidateAtDeclines(t *testing.T) {
	discard, dev := true, "/dev/sda"
	var cfg Config
	cfg.Storage.Luks = []Luks{{Name: "root", Device: &dev, Discard: &discard}}
	if _, ok := cfg.ValidateAt(V3_3); ok {
		t.Error("ValidateAt answered for 3.3.0 with storage.luks.discard (3.4.0) set")
	}
	if _, ok := cfg.ValidateAt(V3_4); !ok {
		t.Error("ValidateAt declined 3.4.0 with storage.luks.discard set")
	}
	cfg = Config{}
	cfg.Storage.Files = []File{{Node: Node{Path: "/a\xff"}}}
	if _, ok := cfg.ValidateAt(V3_4); ok {
		t.Error("ValidateAt answered for a path that is not UTF-8")
	}
}
