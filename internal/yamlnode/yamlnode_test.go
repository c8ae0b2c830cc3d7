package yamlnode

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// top parses src and returns the value of key in its top mapping.
func top(t *testing.T, src, key string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("yaml.Unmarshal(%q) = %v", src, err)
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func TestPrimitives(t *testing.T) {
	const src = "a: &x text\nb: *x\nc: ~\nd: null\ne: [1, 2]\ny: &y [3]\nf: *y\ng: {k: v}\nh: 'null'\n"
	for _, tc := range []struct {
		key    string
		null   bool
		scalar string
		ok     bool
		items  int
	}{
		{key: "a", scalar: "text", ok: true},
		{key: "b", scalar: "text", ok: true},
		{key: "c", null: true},
		{key: "d", null: true},
		{key: "e", items: 2},
		{key: "f", items: 1},
		{key: "g"},
		{key: "h", scalar: "null", ok: true},
		{key: "missing", null: true},
	} {
		n := top(t, src, tc.key)
		if got := IsNull(n); got != tc.null {
			t.Errorf("IsNull(%s) = %v, want %v", tc.key, got, tc.null)
		}
		if s, ok := Scalar(n); s != tc.scalar || ok != tc.ok {
			t.Errorf("Scalar(%s) = %q, %v, want %q, %v", tc.key, s, ok, tc.scalar, tc.ok)
		}
		if got := len(Items(n)); got != tc.items {
			t.Errorf("len(Items(%s)) = %d, want %d", tc.key, got, tc.items)
		}
	}
	if Deref(nil) != nil {
		t.Errorf("Deref(nil) = non-nil, want nil")
	}
}
