package platform

// Most platforms' metadata is one JSON document (DigitalOcean, Hetzner,
// Vultr, UpCloud, Akamai, Oracle Cloud, Azure, the config drives). Instead
// of a Go type per platform (each decoded with reflection and copied field
// by field, which cost the binary a few KB per platform), a platform lists
// the paths of what it needs in its document, and one walker reads them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/resource"
)

// jsonPath returns the value under key of the object v, nil when v is not
// an object or has no such key.
func jsonPath(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

// yamlBlock returns the lines indented below the top-level "key:" of a YAML
// document (its nested value), nil when the key is absent or has no block.
func yamlBlock(data []byte, key string) []byte {
	var out []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case !in && strings.TrimRight(line, " \r") == key+":":
			in = true
		case in && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, " ")):
			out = append(out, line)
		case in:
			return []byte(strings.Join(out, "\n"))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return []byte(strings.Join(out, "\n"))
}

// keyLines splits a list of keys, one a line, dropping blanks around
// each.
func keyLines(s string) []string {
	var keys []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			keys = append(keys, line)
		}
	}
	return keys
}

// jsonSpec says where a platform's document keeps the hostname, the SSH
// keys and the attributes. Paths are dot-separated object keys and list
// indexes; "*" stands for every element of a list, or every value of an
// object in key order. An attribute whose name ends in "_*" gets one line
// per value, numbered from 0 in order.
type jsonSpec struct {
	Hostname string
	Keys     []string
	Attrs    []field
}

// getJSONDoc fetches and decodes one JSON document; numbers keep their
// text (an instance id of 123 stays "123").
func (host *Host) getJSONDoc(ctx context.Context, r resource.Request) (any, error) {
	data, err := host.get(ctx, r)
	if err != nil {
		return nil, err
	}
	doc, err := decodeJSONDoc(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: decoding the answer: %w: %w", host.ID, r.URL, ErrProtocol, err)
	}
	return doc, nil
}

// decodeJSONDoc decodes one JSON document for jsonGet, numbers as
// json.Number.
func decodeJSONDoc(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	err := d.Decode(&doc)
	return doc, err
}

// jsonGet returns the values at path in v; absent paths, nulls and empty
// strings give none.
func jsonGet(v any, path string) []string {
	var out []string
	var walk func(v any, parts []string)
	walk = func(v any, parts []string) {
		if len(parts) == 0 {
			switch x := v.(type) {
			case string:
				if x != "" {
					out = append(out, x)
				}
			case json.Number:
				out = append(out, x.String())
			case bool:
				out = append(out, strconv.FormatBool(x))
			}
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if parts[0] != "*" {
				walk(x[parts[0]], parts[1:])
				return
			}
			for _, k := range sortedKeys(x) {
				walk(x[k], parts[1:])
			}
		case []any:
			if parts[0] == "*" {
				for _, e := range x {
					walk(e, parts[1:])
				}
			} else if i, err := strconv.Atoi(parts[0]); err == nil && i >= 0 && i < len(x) {
				walk(x[i], parts[1:])
			}
		}
	}
	walk(v, strings.Split(path, "."))
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// read applies the spec to doc. Keys are split into lines: some platforms
// serve them as one multi-line string.
func (s jsonSpec) read(doc any) Metadata {
	var m Metadata
	if v := jsonGet(doc, s.Hostname); len(v) > 0 {
		m.Hostname = v[0]
	}
	for _, p := range s.Keys {
		for _, k := range jsonGet(doc, p) {
			for _, line := range strings.Split(k, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					m.Keys = append(m.Keys, line)
				}
			}
		}
	}
	for _, f := range s.Attrs {
		vals := jsonGet(doc, f.path)
		if name, ok := strings.CutSuffix(f.attr, "_*"); ok {
			for i, v := range vals {
				m.add(name+"_"+strconv.Itoa(i), v)
			}
		} else if len(vals) > 0 {
			m.add(f.attr, vals[0])
		}
	}
	return m
}

// jsonMetadata fetches one document and applies spec.
func (host *Host) jsonMetadata(ctx context.Context, r resource.Request, spec jsonSpec) (Metadata, error) {
	doc, err := host.getJSONDoc(ctx, r)
	if err != nil {
		return Metadata{}, err
	}
	return spec.read(doc), nil
}
