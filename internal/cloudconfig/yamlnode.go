package cloudconfig

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/internal/yamlnode"
)

// The helpers below read cloud-init's YAML as cloud-init does: it uses
// PyYAML's safe_load, which implements YAML 1.1, so yes/no/on/off are
// booleans and 0644 is octal, where yaml.v3 (YAML 1.2) reads strings and
// decimals. Aliases are followed.

// boolean reads a YAML 1.1 boolean.
func boolean(n *yaml.Node) (value, ok bool) {
	s, ok := yamlnode.Scalar(n)
	if !ok || yamlnode.Deref(n).Tag == "!!str" && yamlnode.Deref(n).Style != 0 {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true, true
	case "false", "no", "off", "n":
		return false, true
	}
	return false, false
}

// integer reads a YAML 1.1 integer: decimal, 0x hex, 0o or 0-prefixed
// octal.
func integer(n *yaml.Node) (int64, bool) {
	s, ok := yamlnode.Scalar(n)
	if !ok {
		return 0, false
	}
	s = strings.ReplaceAll(s, "_", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	var v int64
	var err error
	switch {
	case strings.HasPrefix(s, "0x"):
		v, err = strconv.ParseInt(s[2:], 16, 64)
	case strings.HasPrefix(s, "0o"):
		v, err = strconv.ParseInt(s[2:], 8, 64)
	case len(s) > 1 && s[0] == '0':
		v, err = strconv.ParseInt(s[1:], 8, 64)
	default:
		v, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// isInt reports a plain scalar YAML 1.1 reads as an integer.
func isInt(n *yaml.Node) bool {
	n = yamlnode.Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Style != 0 {
		return false
	}
	_, ok := integer(n)
	return ok
}

// kv is one key and its value in a mapping.
type kv struct {
	key   string
	k, v  *yaml.Node
	label string // where it comes from, for multipart user-data
}

// pairs returns a mapping's keys and values, in order (nil for anything
// else).
func pairs(n *yaml.Node) []kv { return pairsDepth(n, 0) }

// pairsDepth follows merge keys (<<) at most 8 deep: an alias may point
// back at the mapping that merges it.
func pairsDepth(n *yaml.Node, depth int) []kv {
	n = yamlnode.Deref(n)
	if depth > 8 {
		return nil
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []kv
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := yamlnode.Deref(n.Content[i])
		if k.Tag == "!!merge" {
			for _, m := range append([]*yaml.Node{n.Content[i+1]}, yamlnode.Items(n.Content[i+1])...) {
				if yamlnode.Deref(m) != nil && yamlnode.Deref(m).Kind == yaml.MappingNode {
					out = append(out, pairsDepth(m, depth+1)...)
				}
			}
			continue
		}
		out = append(out, kv{key: k.Value, k: n.Content[i], v: n.Content[i+1]})
	}
	return out
}

// get returns the value of key in a mapping, nil when absent.
func get(n *yaml.Node, key string) *yaml.Node {
	var found *yaml.Node
	for _, p := range pairs(n) {
		if p.key == key {
			found = p.v
		}
	}
	return found
}

// strs reads a list of strings, or one string of comma-separated ones (as
// cloud-init's util.uniq_merge reads groups and such).
func strs(n *yaml.Node) ([]string, bool) {
	if s, ok := yamlnode.Scalar(n); ok {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out, true
	}
	if yamlnode.Deref(n) == nil || yamlnode.Deref(n).Kind != yaml.SequenceNode {
		return nil, false
	}
	var out []string
	for _, it := range yamlnode.Items(n) {
		s, ok := yamlnode.Scalar(it)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// line is where a node starts (0 for none).
func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// lastLine is the last line a node's text takes (0 for none): the latest
// of its own and its children's, a block scalar (| or >) ending as many
// lines below its indicator as its value has (one more without a final
// line break: |- strips it). Aliases count where they are written.
func lastLine(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	end := n.Line
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 && n.Value != "" {
		end += strings.Count(n.Value, "\n")
		if !strings.HasSuffix(n.Value, "\n") {
			end++
		}
	}
	for _, c := range n.Content {
		end = max(end, lastLine(c))
	}
	return end
}
