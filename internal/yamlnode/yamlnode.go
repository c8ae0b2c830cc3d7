// Package yamlnode reads yaml.v3 node trees: the few primitives every
// reader of YAML in flint shares (the Butane translator, the cloud-config
// translator, the platforms' NoCloud and config-drive documents), so an
// alias, a null and a scalar mean the same to all of them. What a value
// means (YAML 1.1 booleans for cloud-init, the config model's types for
// Butane) stays with each reader.
//
// Family: plumbing (internal/README.md).
package yamlnode

import "go.yaml.in/yaml/v3"

// maxAliasChain bounds Deref. yaml.v3 never anchors an alias, so a chain
// is one link long; the bound only keeps a hand-built tree from looping.
const maxAliasChain = 32

// Deref follows an alias (*anchor) to the node it names; other nodes, and
// nil, are returned as they are.
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasChain; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports an absent value (nil), ~ or null, through an alias.
func IsNull(n *yaml.Node) bool {
	n = Deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Scalar returns a scalar's text, through an alias; ok is false for null
// and for anything not a scalar.
func Scalar(n *yaml.Node) (string, bool) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", false
	}
	return n.Value, true
}

// Items returns a sequence's items, through an alias (nil for anything
// else).
func Items(n *yaml.Node) []*yaml.Node {
	n = Deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}
