package agent

// NoCloud drives keep their metadata in YAML (meta-data, #cloud-config
// user-data and vendor-data). flint needs a handful of top-level values
// from them, so instead of a YAML library (which costs the binary more
// than the rest of the agent), readYAMLKeys reads exactly that subset and
// refuses anything else in the values it was asked for: a value it cannot
// read is an error, never a guess. The other keys' values are skipped
// whatever they hold, as long as they are indented below their key.
//
// Errors name the line, never its text: user-data holds password hashes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// errYAML means a document holds something the subset reader does not
// read where a wanted value is (a nested mapping, an anchor, a block
// scalar), or is not a mapping at all.
var errYAML = errors.New("YAML flint does not read")

// readYAMLKeys reads the wanted top-level keys of a YAML (or JSON) mapping:
// each found key gets its string, or its list's strings (for a list, or
// a mapping of strings, in key order); see listMark.
func readYAMLKeys(data []byte, wanted ...string) (map[string][]string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return readJSONKeys(t, wanted)
	}
	out := map[string][]string{}
	seen := map[string]bool{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); {
		line := strings.TrimRight(lines[i], "\r")
		n := i + 1
		i++
		if blankOrComment(line) {
			continue
		}
		switch {
		case line == "---" && len(seen) == 0:
			continue
		case line == "...":
			i = len(lines)
			continue
		case indentOf(line) < 0:
			return nil, fmt.Errorf("line %d: a tab in the indentation: %w", n, errYAML)
		case indentOf(line) > 0, strings.HasPrefix(line, "- "), line == "-":
			return nil, fmt.Errorf("line %d: not a top-level key: %w", n, errYAML)
		}
		key, rest, ok := splitKey(line)
		if !ok {
			return nil, fmt.Errorf("line %d: not a top-level \"key: value\": %w", n, errYAML)
		}
		if seen[key] {
			return nil, fmt.Errorf("line %d: key %q given twice: %w", n, key, errYAML)
		}
		seen[key] = true
		// The value's lines: every following line that is indented, or a
		// list item at the key's own indentation (YAML allows "key:\n- a").
		end := i
		for end < len(lines) {
			l := strings.TrimRight(lines[end], "\r")
			if !blankOrComment(l) && indentOf(l) == 0 && !strings.HasPrefix(l, "- ") && l != "-" {
				break
			}
			end++
		}
		block := lines[i:end]
		i = end
		if !slices.Contains(wanted, key) {
			continue
		}
		vals, err := yamlValue(rest, block, n)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		out[key] = vals
		if rest == "" || strings.HasPrefix(rest, "[") {
			out[listMark+key] = nil
		}
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

// yamlValue reads the value of a wanted key: rest is what follows
// "key:" on its line, block the lines below it; n is the key's line.
func yamlValue(rest string, block []string, n int) ([]string, error) {
	if rest != "" {
		s, err := yamlScalar(rest, n)
		if err != nil {
			return nil, err
		}
		// A plain scalar may go on over more-indented lines.
		for j, l := range block {
			l = strings.TrimRight(l, "\r")
			if blankOrComment(l) {
				continue
			}
			if strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, `'`) || indentOf(l) <= 0 {
				return nil, fmt.Errorf("line %d: a value over several lines: %w", n+1+j, errYAML)
			}
			s += " " + strings.TrimSpace(l)
		}
		if strings.HasPrefix(s, "[") {
			return yamlFlowList(s, n)
		}
		return []string{s}, nil
	}
	// A block below the key: a list ("- item") or a mapping of strings.
	var vals []string
	var names []string
	itemIndent := -1
	for j := 0; j < len(block); j++ {
		l := strings.TrimRight(block[j], "\r")
		ln := n + 1 + j
		if blankOrComment(l) {
			continue
		}
		ind := indentOf(l)
		if ind < 0 {
			return nil, fmt.Errorf("line %d: a tab in the indentation: %w", ln, errYAML)
		}
		if itemIndent < 0 {
			itemIndent = ind
		}
		body := l[ind:]
		if ind != itemIndent {
			return nil, fmt.Errorf("line %d: nested deeper than a list of strings: %w", ln, errYAML)
		}
		if item, ok := strings.CutPrefix(body, "- "); ok || body == "-" {
			if names != nil {
				return nil, fmt.Errorf("line %d: a list item in a mapping: %w", ln, errYAML)
			}
			item = strings.TrimSpace(item)
			if item == "" || strings.HasPrefix(item, "- ") || item[0] == '[' {
				return nil, fmt.Errorf("line %d: an empty or nested list item: %w", ln, errYAML)
			}
			if _, _, isMap := splitKey(item); isMap && !strings.HasPrefix(item, `"`) && !strings.HasPrefix(item, `'`) {
				return nil, fmt.Errorf("line %d: a mapping in the list, want strings: %w", ln, errYAML)
			}
			s, err := yamlScalar(item, ln)
			if err != nil {
				return nil, err
			}
			// Continuation lines of a plain item are indented past the dash.
			for j+1 < len(block) {
				next := strings.TrimRight(block[j+1], "\r")
				if blankOrComment(next) || indentOf(next) <= itemIndent {
					break
				}
				if item[0] == '"' || item[0] == '\'' {
					return nil, fmt.Errorf("line %d: a quoted item over several lines: %w", ln+1, errYAML)
				}
				s += " " + strings.TrimSpace(next)
				j++
			}
			vals = append(vals, s)
			continue
		}
		if names == nil && vals != nil {
			return nil, fmt.Errorf("line %d: a mapping entry in a list: %w", ln, errYAML)
		}
		name, v, ok := splitKey(body)
		if !ok || v == "" {
			return nil, fmt.Errorf("line %d: neither a list item nor \"name: string\": %w", ln, errYAML)
		}
		s, err := yamlScalar(v, ln)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
		vals = append(vals, s)
	}
	if names != nil {
		// Mapping values in key order, as the config drive's keys are.
		byName := map[string]string{}
		for k, name := range names {
			if _, dup := byName[name]; dup {
				return nil, fmt.Errorf("line %d: %q given twice: %w", n, name, errYAML)
			}
			byName[name] = vals[k]
		}
		slices.Sort(names)
		for k, name := range names {
			vals[k] = byName[name]
		}
	}
	return vals, nil
}

// yamlScalar reads one scalar on one line: plain (a " #" starts a
// comment), 'single-quoted' or "double-quoted" (JSON escapes). Anchors,
// aliases, tags, block scalars and flow mappings are refused; "~" and
// "null" are an empty value.
func yamlScalar(s string, n int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", nil
	case s[0] == '"':
		end := closingQuote(s)
		if end < 0 || !blankOrComment(s[end+1:]) {
			return "", fmt.Errorf("line %d: a double-quoted string flint cannot read: %w", n, errYAML)
		}
		var v string
		if err := json.Unmarshal([]byte(s[:end+1]), &v); err != nil {
			return "", fmt.Errorf("line %d: a double-quoted string flint cannot read: %w", n, errYAML)
		}
		return v, nil
	case s[0] == '\'':
		var b strings.Builder
		for k := 1; k < len(s); k++ {
			if s[k] != '\'' {
				b.WriteByte(s[k])
				continue
			}
			if k+1 < len(s) && s[k+1] == '\'' {
				b.WriteByte('\'')
				k++
				continue
			}
			if !blankOrComment(s[k+1:]) {
				break
			}
			return b.String(), nil
		}
		return "", fmt.Errorf("line %d: a single-quoted string flint cannot read: %w", n, errYAML)
	case strings.ContainsRune("&*!|>{%@`", rune(s[0])):
		return "", fmt.Errorf("line %d: an anchor, alias, tag, block scalar or flow mapping: %w", n, errYAML)
	}
	if k := strings.Index(s, " #"); k >= 0 {
		s = strings.TrimSpace(s[:k])
	}
	if s == "~" || s == "null" {
		return "", nil
	}
	return s, nil
}

// yamlFlowList reads "[a, 'b', "c"]" of scalars without commas in them.
func yamlFlowList(s string, n int) ([]string, error) {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(s, "["), "]")
	if !ok || strings.ContainsAny(inner, "[]{}") {
		return nil, fmt.Errorf("line %d: a flow list flint cannot read: %w", n, errYAML)
	}
	var vals []string
	for _, item := range strings.Split(inner, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		v, err := yamlScalar(item, n)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	return vals, nil
}

// closingQuote returns the index of the quote that ends the
// double-quoted string s starts with, or -1.
func closingQuote(s string) int {
	for k := 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++
		case '"':
			return k
		}
	}
	return -1
}

// splitKey splits "key: value" (or "key:") at the first ": "; keys are
// plain, without quotes or YAML indicators.
func splitKey(line string) (key, rest string, ok bool) {
	k := strings.Index(line, ": ")
	if k < 0 {
		if !strings.HasSuffix(line, ":") {
			return "", "", false
		}
		k = len(line) - 1
	}
	key = line[:k]
	if key == "" || strings.ContainsAny(key[:1], `"'?{[-&*!|>%@#`+"`") || strings.ContainsAny(key, " \t") {
		return "", "", false
	}
	return key, strings.TrimSpace(line[k+1:]), true
}

// indentOf returns the number of leading spaces of line, -1 when a tab
// is among them (YAML forbids tabs there).
func indentOf(line string) int {
	k := len(line) - len(strings.TrimLeft(line, " \t"))
	if strings.Contains(line[:k], "\t") {
		return -1
	}
	return k
}

// blankOrComment reports a line without content.
func blankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || t[0] == '#'
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
