package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/flintboot/flint/config/internal/jsontree"
)

// Parse reads a config of any supported spec version, checks it against the
// rules of the version it declares, and returns it upgraded to the newest
// model. The report lists every problem found, with JSON paths, lines and
// columns; the error is nil exactly when the report has no errors, and
// otherwise wraps ErrEmpty, ErrSyntax, ErrInvalidVersion, ErrUnknownVersion or
// ErrInvalid.
//
// The config's strings share raw's memory rather than copy it (a config can
// be tens of megabytes): raw must not change afterwards.
func Parse(raw []byte) (Config, Report, error) {
	cfg, v, r, err := parse(raw)
	if errors.Is(err, errSpec2) {
		cfg, _, r, err := parseSpec2(raw)
		return cfg, r, err
	}
	if err != nil {
		return Config{}, r, err
	}
	upgrade(&cfg, v)
	return cfg, r, nil
}

// ParseDeclared is Parse, also returning the version the config declares.
// As with Parse, raw must not change afterwards.
func ParseDeclared(raw []byte) (Config, Version, Report, error) {
	cfg, v, r, err := parse(raw)
	if errors.Is(err, errSpec2) {
		return parseSpec2(raw)
	}
	if err != nil {
		return Config{}, v, r, err
	}
	upgrade(&cfg, v)
	return cfg, v, r, nil
}

func parse(raw []byte) (Config, Version, Report, error) {
	var r Report
	if len(bytes.Trim(raw, " \t\r\n")) == 0 { // JSON whitespace only (RFC 8259 §2)
		r.Entries = append(r.Entries, Entry{Severity: SeverityError, Message: "the config is empty"})
		return Config{}, Version{}, r, ErrEmpty
	}
	doc, err := jsontree.Parse(raw)
	if err != nil {
		var se *jsontree.SyntaxError
		if errors.As(err, &se) {
			r.Entries = append(r.Entries, Entry{Severity: SeverityError, Line: se.Line, Column: se.Column, Message: se.Msg})
		} else {
			r.Entries = append(r.Entries, Entry{Severity: SeverityError, Message: err.Error()})
		}
		return Config{}, Version{}, r, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	v, err := declaredVersion(doc, &r)
	if err != nil {
		return Config{}, v, r, err
	}
	var cfg Config
	newDecoder(doc, v, &r).decode(reflect.ValueOf(&cfg).Elem())
	fatal := r.IsFatal()
	decoded := len(r.Entries)
	c := checker{version: v, report: &r, fromText: true}
	c.config(cfg)
	locateEntries(doc, r.Entries[decoded:], c.paths)
	dropShadowed(&r, decoded)
	if fatal || r.IsFatal() {
		return Config{}, v, r, ErrInvalid
	}
	return cfg, v, r, nil
}

// dropShadowed removes the checker's entries (those from index from on) at
// or under a path where the decoder found a value of the wrong type. The
// decoder left that field empty, so the checker would call a value the
// config does give "required" (`"level": 1` is not a missing raid level,
// it is a number where a string belongs).
func dropShadowed(r *Report, from int) {
	var bad []string
	for _, e := range r.Entries[:from] {
		if e.Severity == SeverityError {
			bad = append(bad, e.Path)
		}
	}
	if len(bad) == 0 {
		return
	}
	kept := r.Entries[:from]
	for _, e := range r.Entries[from:] {
		shadowed := false
		for _, b := range bad {
			if e.Path == b || strings.HasPrefix(e.Path, b+".") {
				shadowed = true
				break
			}
		}
		if !shadowed {
			kept = append(kept, e)
		}
	}
	r.Entries = kept
}

// declaredVersion finds ignition.version the way the decoder will (keys
// matched exactly, else ignoring case; the last occurrence that is not null
// wins, since null has no effect on a struct or a string, as in
// encoding/json) and checks it before anything else is read, since it
// decides which rules apply.
func declaredVersion(doc *jsontree.Doc, r *Report) (Version, error) {
	add := func(p jsonPath, off int, msg string) {
		line, col := doc.Position(off)
		r.Entries = append(r.Entries, Entry{Severity: SeverityError, Path: p.String(), Line: line, Column: col, Message: msg})
	}
	kind, rootOff := doc.Reader().Peek()
	if kind != jsontree.Object {
		add(nil, rootOff, fmt.Sprintf("a config is a JSON object, found %s", kind))
		return Version{}, ErrInvalid
	}
	ignOff := -1 // as lastMember, from the keys Parse recorded
	for _, keyOff := range doc.TopKeys() {
		rd := doc.At(keyOff)
		if key, _ := rd.Key(); strings.EqualFold(key, "ignition") {
			if kind, at := rd.Peek(); kind != jsontree.Null {
				ignOff = at
			}
		}
	}
	if ignOff < 0 {
		add(nil, rootOff, "ignition.version is missing; supported versions are "+supportedList())
		return Version{}, ErrInvalidVersion
	}
	if kind, _ := doc.At(ignOff).Peek(); kind != jsontree.Object {
		add(jsonPath{"ignition"}, ignOff, fmt.Sprintf("expected an object, found %s", kind))
		return Version{}, ErrInvalid
	}
	verOff := lastMember(doc, ignOff, "version")
	if verOff < 0 {
		add(jsonPath{"ignition"}, ignOff, "ignition.version is missing; supported versions are "+supportedList())
		return Version{}, ErrInvalidVersion
	}
	ver := doc.At(verOff)
	if kind, _ := ver.Peek(); kind != jsontree.String {
		what := kind.String()
		if kind == jsontree.Number {
			what = "number " + ver.Literal() + ` (write it as a string, e.g. "3.4.0")`
		}
		add(jsonPath{"ignition", "version"}, verOff, fmt.Sprintf("expected a version string, found %s; supported versions are %s", what, supportedList()))
		return Version{}, ErrInvalidVersion
	}
	text := ver.Str()
	v, err := ParseVersion(text)
	if err != nil {
		msg := err.Error()
		if strings.HasPrefix(text, "1.") || strings.HasPrefix(text, "2.") {
			msg += "; spec 1.x and 2.x configs must be translated to 3.x first"
		}
		add(jsonPath{"ignition", "version"}, verOff, msg)
		return Version{}, err
	}
	return v, nil
}

// lastMember returns the offset of the value of the last member of the
// object at off whose key is key, ignoring case, and whose value is not
// null; -1 when there is none.
func lastMember(doc *jsontree.Doc, off int, key string) int {
	found := -1
	rd := doc.At(off)
	for rd.Begin(); rd.More(); rd.Skip() {
		k, _ := rd.Key()
		if kind, at := rd.Peek(); kind != jsontree.Null && strings.EqualFold(k, key) {
			found = at
		}
	}
	return found
}

// pathTrie holds the paths of the checker's entries, for finding where each
// is in the document in one reading of it instead of one per entry (a
// config can have hundreds of thousands of entries).
type pathTrie struct {
	entries []int // the entries whose path ends here
	// next is keyed by a path element: a string (a key) or an int (an
	// index).
	next map[any]*pathTrie
}

// locateEntries sets the line and column of each entry to where the value
// at its path is, or its deepest ancestor present in the document when the
// path names something absent (a required key that is missing, say). Keys
// are matched as the decoder matches them (and encoding/json, hence the
// reference): every key equal to the path's when case is ignored sets the
// same field, so the last such member wins.
func locateEntries(doc *jsontree.Doc, entries []Entry, paths []jsonPath) {
	if len(entries) == 0 {
		return
	}
	root := &pathTrie{}
	for i, p := range paths {
		t := root
		for _, e := range p {
			if t.next == nil {
				t.next = map[any]*pathTrie{}
			}
			if t.next[e] == nil {
				t.next[e] = &pathTrie{}
			}
			t = t.next[e]
		}
		t.entries = append(t.entries, i)
	}
	offsets := make([]int, len(entries))
	root.locate(doc, doc.Reader().Offset(), offsets)
	for i := range entries {
		entries[i].Line, entries[i].Column = doc.Position(offsets[i])
	}
}

// locate places every entry at or under t at the value at off, then the
// ones whose paths go further at the values there.
func (t *pathTrie) locate(doc *jsontree.Doc, off int, offsets []int) {
	t.place(off, offsets)
	rd := doc.At(off)
	kind, _ := rd.Peek()
	if len(t.next) == 0 || kind != jsontree.Object && kind != jsontree.Array {
		return
	}
	rd.Begin()
	for i := 0; rd.More(); i++ {
		if kind == jsontree.Array {
			if next := t.next[i]; next != nil {
				next.locate(doc, rd.Offset(), offsets)
			}
		} else {
			key, _ := rd.Key()
			for e, next := range t.next {
				if s, ok := e.(string); ok && strings.EqualFold(s, key) {
					next.locate(doc, rd.Offset(), offsets)
				}
			}
		}
		rd.Skip()
	}
}

// place sets the offset of every entry at or under t.
func (t *pathTrie) place(off int, offsets []int) {
	for _, i := range t.entries {
		offsets[i] = off
	}
	for _, next := range t.next {
		next.place(off, offsets)
	}
}
