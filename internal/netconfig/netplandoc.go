package netconfig

// VMware's netplan document: the guestinfo.metadata YAML (or JSON) with
// only its network key, as Afterburn re-encodes it (coreos/afterburn
// src/providers/vmware/amd64.rs, parse_netplan_config): serde_yaml reads
// it into a serde_json::Value, whose objects are sorted maps, and
// serde_yaml 0.9 writes that back. The value model and the scalar styles
// here are serde_yaml's; the layout is libyaml's emitter, which
// yaml.v3's is a port of (block sequences not indented under their key:
// CompactSeqIndent). One difference is left: libyaml folds a plain or
// quoted scalar with spaces that runs past column 80, yaml.v3 never folds.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// NetplanFromMetadata returns the netplan document of VMware's
// guestinfo.metadata: {"network": <its network value>}, re-encoded.
func NetplanFromMetadata(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("invalid YAML/JSON metadata: %w", err)
	}
	top := &root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	top = deref(top)
	var network *yaml.Node
	if top.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(top.Content); i += 2 {
			if deref(top.Content[i]).Value == "network" {
				network = top.Content[i+1]
			}
		}
	}
	if network == nil {
		return nil, errors.New("no 'network' key found")
	}
	v, err := jsonValue(network, 0)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML/JSON metadata: %w", err)
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{plain("network"), v}}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func plain(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

// jsonValue is n as serde_json::Value holds it, as a node to encode:
// mappings sorted by key (a BTreeMap; a later duplicate key wins),
// scalars resolved as serde_yaml 0.9 resolves untagged ones (YAML 1.2:
// null, true/false, integers, floats; the rest strings), written with
// serde_yaml's styles.
func jsonValue(n *yaml.Node, depth int) (*yaml.Node, error) {
	if depth > 128 {
		return nil, errors.New("recursion limit exceeded")
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return nil, errors.New("mapping key is not a string")
			}
			v, err := jsonValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := &yaml.Node{Kind: yaml.MappingNode}
		if len(keys) == 0 {
			out.Style = yaml.FlowStyle
		}
		for _, k := range keys {
			out.Content = append(out.Content, str(k), m[k])
		}
		return out, nil
	case yaml.SequenceNode:
		out := &yaml.Node{Kind: yaml.SequenceNode}
		if len(n.Content) == 0 {
			out.Style = yaml.FlowStyle
		}
		for _, c := range n.Content {
			v, err := jsonValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out.Content = append(out.Content, v)
		}
		return out, nil
	case yaml.ScalarNode:
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!str" && n.Style&yaml.TaggedStyle != 0 {
			return str(n.Value), nil
		}
		return untagged(n.Value), nil
	}
	return nil, fmt.Errorf("unexpected YAML node kind %d", n.Kind)
}

// untagged is serde_yaml's reading of a plain scalar (de.rs,
// visit_untagged_scalar), written back as serde_json's value is.
func untagged(v string) *yaml.Node {
	if out, ok := nonString(v); ok {
		return plain(out)
	}
	return str(v)
}

// nonString is how serde_json's value of a plain scalar that serde_yaml
// reads as null, a bool or a number is written; ok is false for a
// string.
func nonString(v string) (string, bool) {
	switch v {
	case "", "~", "null", "Null", "NULL":
		return "null", true
	case "true", "True", "TRUE":
		return "true", true
	case "false", "False", "FALSE":
		return "false", true
	}
	if i, ok := parseInt(v); ok {
		return i, true
	}
	if f, ok := parseFloat(v); ok {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			// serde_json has no such number: Value::Null.
			return "null", true
		}
		return ryu(f), true
	}
	return "", false
}

// parseInt is serde_yaml's integer: decimal, 0x, 0o or 0b, with a sign,
// no leading zeros in decimal, within i64 or u64.
func parseInt(v string) (string, bool) {
	s, neg := v, false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0o"):
		base, s = 8, s[2:]
	case strings.HasPrefix(s, "0b"):
		base, s = 2, s[2:]
	case len(s) > 1 && s[0] == '0':
		return "", false
	}
	if s == "" || s[0] == '+' || s[0] == '-' || strings.ContainsRune(s, '_') {
		return "", false
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return "", false
	}
	if !neg {
		return strconv.FormatUint(u, 10), true
	}
	if u > 1<<63 {
		return "", false
	}
	return strconv.FormatInt(-int64(u-1)-1, 10), true
}

// parseFloat is serde_yaml's float: .inf, -.inf, .nan in three cases,
// else what Rust's f64 parser takes that is finite.
func parseFloat(v string) (float64, bool) {
	s := v
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		if strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
			return 0, false
		}
		s = rest
	}
	switch {
	case s == ".inf" || s == ".Inf" || s == ".INF":
		return math.Inf(1), true
	case v == "-.inf" || v == "-.Inf" || v == "-.INF":
		return math.Inf(-1), true
	case v == ".nan" || v == ".NaN" || v == ".NAN":
		return math.NaN(), true
	}
	// Rust's grammar: digits with an optional point and exponent; Go's
	// ParseFloat also takes hex, underscores, "inf" and "nan", which
	// Rust refuses or makes non-finite.
	if s == "" || strings.ContainsAny(s, "xXpP_") || strings.ContainsFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' && r != 'e' || r >= 'A' && r <= 'Z' && r != 'E' }) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// ryu formats f as the ryu crate's format_finite does (serde_yaml's
// serialize_f64): the shortest digits, as 1234.0, 12.34, 0.001234,
// 1e30 or 1.234e33.
func ryu(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	length := len(digits)
	kk := x + 1 // 10^(kk-1) <= f < 10^kk
	k := kk - length
	var out string
	switch {
	case k >= 0 && kk <= 16:
		out = digits + strings.Repeat("0", k) + ".0"
	case kk > 0 && kk <= 16:
		out = digits[:kk] + "." + digits[kk:]
	case kk > -5 && kk <= 0:
		out = "0." + strings.Repeat("0", -kk) + digits
	case length == 1:
		out = digits + "e" + strconv.Itoa(kk-1)
	default:
		out = digits[:1] + "." + digits[1:] + "e" + strconv.Itoa(kk-1)
	}
	return sign + out
}

// str is a string as serde_yaml 0.9 writes it (ser.rs, serialize_str):
// literal with a newline; single-quoted where it would read back as
// another type (null, a bool, a number, or digits with a leading zero);
// else the emitter's choice, plain when it may be.
func str(s string) *yaml.Node {
	n := plain(s)
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	} else if _, ok := nonString(s); ok || digitsButNotNumber(s) {
		n.Style = yaml.SingleQuotedStyle
	}
	return n
}

// digitsButNotNumber: serde_yaml quotes "0123", which YAML 1.1 readers
// take for an octal number.
func digitsButNotNumber(s string) bool {
	t := strings.TrimLeft(s, "+-")
	return len(t) > 1 && t[0] == '0' && strings.Trim(t, "0123456789") == ""
}
