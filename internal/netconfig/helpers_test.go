package netconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// readDoc decodes a YAML or JSON document into the tree Read takes: JSON
// with its numbers as json.Number, YAML with every leaf as its text (""
// for null), as platform's document reader hands it over.
func readDoc(t *testing.T, doc string) any {
	t.Helper()
	if b := bytes.TrimSpace([]byte(doc)); len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("decoding %q: %v", doc, err)
		}
		return v
	}
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("decoding %q: %v", doc, err)
	}
	return leavesAsText(v)
}

// leavesAsText turns YAML's typed leaves into their text.
func leavesAsText(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = leavesAsText(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = leavesAsText(e)
		}
		return x
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// readFixture reads and decodes a file of testdata.
func readFixture(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readDoc(t, string(data))
}
