package platform

// NoCloud drives keep their metadata in YAML (meta-data, #cloud-config
// user-data and vendor-data, network-config), read here with gopkg.in/yaml.v3
// (a parser with line numbers, for untrusted input; cloud-config
// translation uses it too). readYAMLKeys takes the handful of top-level
// values flint needs; readYAMLTree reads a whole network-config document.
// JSON, which NoCloud allows too, goes through encoding/json.
//
// Errors name the line, never its text: user-data holds password hashes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/internal/yamlnode"
)

// errYAML means a document is not YAML, is not a mapping, or holds
// something other than what flint reads where a wanted value is (a
// nested mapping or list).
var errYAML = errors.New("YAML flint does not read")

// maxYAMLDepth bounds how deep readYAMLTree follows nesting and aliases.
const maxYAMLDepth = 32

// yamlTop parses a YAML document and returns its top-level node (nil for
// an empty document).
func yamlTop(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// yamlError rewrites a yaml.v3 error as "line N: what" without the text it
// quotes (a key or a value of the document).
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, after, _ := strings.Cut(rest, ":")
		line, _ = strconv.Atoi(num)
		msg = strings.TrimSpace(after)
	}
	if i := strings.IndexAny(msg, "`'\""); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if line > 0 {
		return fmt.Errorf("line %d: %s: %w", line, msg, errYAML)
	}
	return fmt.Errorf("%s: %w", msg, errYAML)
}

// yamlDuplicate finds a key given twice in a mapping: YAML forbids it,
// and yaml.v3 reports it only when decoding into Go values, not nodes.
func yamlDuplicate(m *yaml.Node) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := yamlnode.Deref(m.Content[i])
		if seen[k.Value] {
			return fmt.Errorf("line %d: a key given twice: %w", k.Line, errYAML)
		}
		seen[k.Value] = true
	}
	return nil
}

// readYAMLKeys reads the wanted top-level keys of a YAML (or JSON) mapping:
// each found key gets its string, or its list's strings (for a list, or
// a mapping of strings, in key order); see listMark.
func readYAMLKeys(data []byte, wanted ...string) (map[string][]string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return readJSONKeys(t, wanted)
	}
	top, err := yamlTop(data)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	if top = yamlnode.Deref(top); top == nil || top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return out, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: not a mapping of keys: %w", top.Line, errYAML)
	}
	if err := yamlDuplicate(top); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		key := yamlnode.Deref(top.Content[i]).Value
		if !slices.Contains(wanted, key) {
			continue
		}
		v := yamlnode.Deref(top.Content[i+1])
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				out[listMark+key] = nil
				out[key] = nil
				continue
			}
			out[key] = []string{v.Value}
			continue
		case yaml.SequenceNode, yaml.MappingNode:
		default:
			return nil, fmt.Errorf("line %d: key %q: want a string, a list or a mapping of strings: %w", v.Line, key, errYAML)
		}
		leaves := v.Content
		if v.Kind == yaml.MappingNode {
			if err := yamlDuplicate(v); err != nil {
				return nil, err
			}
			// A mapping's values, in the order of their keys.
			idx := make([]int, 0, len(v.Content)/2)
			for j := 0; j+1 < len(v.Content); j += 2 {
				idx = append(idx, j)
			}
			slices.SortFunc(idx, func(a, b int) int { return strings.Compare(v.Content[a].Value, v.Content[b].Value) })
			leaves = nil
			for _, j := range idx {
				leaves = append(leaves, v.Content[j+1])
			}
		}
		vals := []string{}
		for _, l := range leaves {
			if l = yamlnode.Deref(l); l.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: key %q: want a string, a list or a mapping of strings: %w", l.Line, key, errYAML)
			}
			text, _ := yamlnode.Scalar(l) // null is ""
			vals = append(vals, text)
		}
		out[listMark+key] = nil
		out[key] = vals
	}
	return out, nil
}

// readJSONKeys reads the wanted keys of a JSON object: KubeVirt writes its
// NoCloud meta-data as JSON, which is YAML too.
func readJSONKeys(data []byte, wanted []string) (map[string][]string, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %w", errYAML, err)
	}
	out := map[string][]string{}
	for _, key := range wanted {
		v, ok := doc[key]
		if !ok || v == nil {
			continue
		}
		var vals []string
		var items []any
		switch x := v.(type) {
		case string, json.Number:
			items = []any{x}
		case []any:
			items = x
		case map[string]any:
			names := make([]string, 0, len(x))
			for name := range x {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				items = append(items, x[name])
			}
		}
		for _, it := range items {
			switch y := it.(type) {
			case string:
				vals = append(vals, y)
			case json.Number:
				vals = append(vals, y.String())
			default:
				return nil, fmt.Errorf("key %q: want a string, a list or a mapping of strings: %w", key, errYAML)
			}
		}
		if items == nil {
			return nil, fmt.Errorf("key %q: want a string, a list or a mapping of strings: %w", key, errYAML)
		}
		if _, ok := v.(string); !ok {
			if _, ok := v.(json.Number); !ok {
				out[listMark+key] = nil
			}
		}
		out[key] = vals
	}
	return out, nil
}

// listMark prefixes, in readYAMLKeys' result, the keys whose value was a
// list or a mapping rather than one string ("key:" with nothing below is
// an empty list).
const listMark = "[]"

// yamlString returns the single string value of key, "" when absent; a
// list or a mapping there is an error.
func yamlString(doc map[string][]string, key string) (string, error) {
	if _, ok := doc[listMark+key]; ok {
		if len(doc[key]) == 0 {
			return "", nil
		}
		return "", fmt.Errorf("key %q: a list or a mapping, want a string: %w", key, errYAML)
	}
	if v := doc[key]; len(v) > 0 {
		return v[0], nil
	}
	return "", nil
}

// readYAMLTree reads a whole network-config document into map[string]any,
// []any and string ("" for an empty value); JSON keeps encoding/json's
// numbers and booleans. Errors name the line, never quoting it.
func readYAMLTree(data []byte) (any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		d := json.NewDecoder(bytes.NewReader(t))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %w", errYAML, err)
		}
		if d.More() {
			return nil, fmt.Errorf("data after the JSON document: %w", errYAML)
		}
		return v, nil
	}
	top, err := yamlTop(data)
	if err != nil {
		return nil, err
	}
	if top == nil {
		return nil, nil
	}
	return yamlTree(top, 0)
}

// yamlTree converts a node, following aliases, at most maxYAMLDepth deep.
func yamlTree(n *yaml.Node, depth int) (any, error) {
	n = yamlnode.Deref(n)
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: nested more than %d deep: %w", n.Line, maxYAMLDepth, errYAML)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		text, _ := yamlnode.Scalar(n) // null is ""
		return text, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlTree(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if err := yamlDuplicate(n); err != nil {
			return nil, err
		}
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := yamlnode.Deref(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key that is not a string: %w", k.Line, errYAML)
			}
			v, err := yamlTree(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: an alias that leads nowhere: %w", n.Line, errYAML)
}
