package agent

// NoCloud drives keep their metadata in YAML (meta-data, #cloud-config
// user-data and vendor-data). flint needs a handful of top-level values
// from them, so instead of a YAML library (which costs the binary more
// than the rest of the agent), readYAMLKeys reads exactly that subset and
// refuses anything else in the values it was asked for: a value it cannot
// read is an error, never a guess. The other keys' values are skipped
// whatever they hold, as long as they are indented below their key.
//
// network-config, read whole, is the exception: readYAMLTree reads its
// nested block mappings and lists, and nothing more.
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

// readYAMLTree reads a whole network-config document: block mappings and
// block sequences nested by indentation, whose leaves are scalars or flow
// lists of scalars, into map[string]any, []any and string ("" for an
// empty value). A list item may be a mapping whose first key is on the
// dash's line. JSON (which NoCloud allows too) goes through encoding/json.
// Anything else (an anchor, a tag, a block scalar, a flow mapping, a list
// directly in a list, a value over several lines, a key given twice,
// tabs in the indentation, a line indented where no value goes) is an
// error naming the line, never quoting it.
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
	p := &yamlParser{}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if blankOrComment(l) || (l == "---" && len(p.lines) == 0) {
			continue
		}
		if l == "..." {
			break
		}
		ind := indentOf(l)
		if ind < 0 {
			return nil, fmt.Errorf("line %d: a tab in the indentation: %w", i+1, errYAML)
		}
		p.lines = append(p.lines, yamlLine{i + 1, ind, strings.TrimRight(l[ind:], " \t")})
	}
	if len(p.lines) == 0 {
		return nil, nil
	}
	v, err := p.node(p.lines[0].ind)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.lines) {
		return nil, fmt.Errorf("line %d: outside the document's top-level node: %w", p.lines[p.i].n, errYAML)
	}
	return v, nil
}

// yamlLine is one line with content: its number, indentation and text
// after the indentation.
type yamlLine struct {
	n, ind int
	text   string
}

// yamlParser walks the lines of readYAMLTree; i is the next line.
type yamlParser struct {
	lines []yamlLine
	i     int
}

// isItem reports a block sequence entry ("- x" or "-").
func isItem(s string) bool { return s == "-" || strings.HasPrefix(s, "- ") }

// node reads the sequence or mapping whose first line is the next one,
// indented by ind.
func (p *yamlParser) node(ind int) (any, error) {
	if isItem(p.lines[p.i].text) {
		return p.sequence(ind)
	}
	return p.mapping(ind)
}

func (p *yamlParser) sequence(ind int) (any, error) {
	out := []any{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.ind < ind || (l.ind == ind && !isItem(l.text)) {
			break
		}
		if l.ind > ind {
			return nil, fmt.Errorf("line %d: indented deeper than the list item before: %w", l.n, errYAML)
		}
		rest := strings.TrimLeft(l.text[1:], " ")
		switch _, _, isKey := splitKey(rest); {
		case rest == "" || rest[0] == '#':
			p.i++
			var v any = ""
			if p.i < len(p.lines) && p.lines[p.i].ind > ind {
				var err error
				if v, err = p.node(p.lines[p.i].ind); err != nil {
					return nil, err
				}
			}
			out = append(out, v)
		case isItem(rest):
			return nil, fmt.Errorf("line %d: a list directly in a list: %w", l.n, errYAML)
		case isKey:
			// A mapping whose first key is on the dash's line: read it as
			// if the dash were a space.
			col := ind + len(l.text) - len(rest)
			p.lines[p.i] = yamlLine{l.n, col, rest}
			v, err := p.mapping(col)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		default:
			v, err := p.leaf(rest, l.n, ind)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func (p *yamlParser) mapping(ind int) (any, error) {
	out := map[string]any{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.ind < ind {
			break
		}
		if l.ind > ind {
			return nil, fmt.Errorf("line %d: indented deeper than the key before: %w", l.n, errYAML)
		}
		if isItem(l.text) {
			return nil, fmt.Errorf("line %d: a list item among a mapping's keys: %w", l.n, errYAML)
		}
		key, rest, ok := splitKey(l.text)
		if !ok {
			return nil, fmt.Errorf("line %d: not \"key: value\": %w", l.n, errYAML)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %d: a key given twice: %w", l.n, errYAML)
		}
		if rest != "" && rest[0] != '#' {
			v, err := p.leaf(rest, l.n, ind)
			if err != nil {
				return nil, err
			}
			out[key] = v
			continue
		}
		// "key:" and the block below, or a list at the key's own
		// indentation; nothing there is an empty value.
		p.i++
		var v any = ""
		if p.i < len(p.lines) {
			if next := p.lines[p.i]; next.ind > ind || (next.ind == ind && isItem(next.text)) {
				var err error
				if v, err = p.node(next.ind); err != nil {
					return nil, err
				}
			}
		}
		out[key] = v
	}
	return out, nil
}

// leaf reads the scalar or flow list s on line n (the parser's next
// line, whose node is indented by ind) and moves past it: nothing may be
// indented below it.
func (p *yamlParser) leaf(s string, n, ind int) (any, error) {
	p.i++
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		return nil, fmt.Errorf("line %d: a value over several lines: %w", p.lines[p.i].n, errYAML)
	}
	if strings.HasPrefix(s, "[") {
		vals, err := yamlFlowList(s, n)
		out := []any{}
		for _, v := range vals {
			out = append(out, v)
		}
		return out, err
	}
	return yamlScalar(s, n)
}
