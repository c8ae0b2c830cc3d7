package spec2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind int

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "a list", "an object"}[k]
}

// node is one JSON value with the byte offset where it starts, so that every
// problem can be reported at its line and column in the 2.x document.
type node struct {
	kind  kind
	off   int
	str   string      // kString
	num   json.Number // kNumber
	b     bool        // kBool
	keys  []string    // kObject, in document order
	koffs []int       // kObject, where each key starts
	vals  []*node     // kObject, parallel to keys
	elems []*node     // kArray
}

// parseTree reads a JSON document into nodes. The config library has
// already checked the syntax; this reader only needs the shape and offsets,
// which encoding/json's token stream gives.
func parseTree(raw []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := readValue(dec, raw)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the config")
	}
	return n, nil
}

// valueStart skips the whitespace and separators that follow offset off.
func valueStart(raw []byte, off int) int {
	for off < len(raw) {
		switch raw[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

func readValue(dec *json.Decoder, raw []byte) (*node, error) {
	start := valueStart(raw, int(dec.InputOffset()))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &node{off: start}
	switch t := tok.(type) {
	case nil:
		n.kind = kNull
	case bool:
		n.kind, n.b = kBool, t
	case json.Number:
		n.kind, n.num = kNumber, t
	case string:
		n.kind, n.str = kString, t
	case json.Delim:
		switch t {
		case '{':
			n.kind = kObject
			for dec.More() {
				koff := valueStart(raw, int(dec.InputOffset()))
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				v, err := readValue(dec, raw)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.koffs = append(n.koffs, koff)
				n.vals = append(n.vals, v)
			}
		case '[':
			n.kind = kArray
			for dec.More() {
				v, err := readValue(dec, raw)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
		default:
			return nil, fmt.Errorf("unexpected %v at offset %d", t, start)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	}
	return n, nil
}

// member returns the value of key in an object, matching keys as
// encoding/json (hence Ignition 0.x) did and as the config library does:
// every key equal to it when case is ignored sets the field, so the last
// one wins. A null sets nothing, as in encoding/json.
func (n *node) member(key string) *node {
	var found *node
	for i, k := range n.keys {
		if n.vals[i].kind != kNull && strings.EqualFold(k, key) {
			found = n.vals[i]
		}
	}
	return found
}

// lines indexes where each line of a document starts, so that positions
// cost a binary search, not a scan from the start: a translation records
// one for nearly every value.
type lines struct {
	raw    []byte
	starts []int
}

func newLines(raw []byte) lines {
	starts := []int{0}
	for i, c := range raw {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lines{raw: raw, starts: starts}
}

// position converts a byte offset into a 1-based line and column, the
// column counted in characters.
func (l lines) position(off int) (line, col int) {
	off = min(off, len(l.raw))
	i := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
	return i + 1, utf8.RuneCount(l.raw[l.starts[i]:off]) + 1
}
