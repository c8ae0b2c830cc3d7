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
	d := decoder{version: v, doc: doc, report: &r}
	d.decode(doc.Root, reflect.ValueOf(&cfg).Elem())
	fatal := r.IsFatal()
	decoded := len(r.Entries)
	c := checker{version: v, doc: doc, report: &r}
	c.config(cfg)
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
// matched exactly, else ignoring case; the last occurrence wins) and checks
// it before anything else is read, since it decides which rules apply.
func declaredVersion(doc *jsontree.Doc, r *Report) (Version, error) {
	add := func(p jsonPath, off int, msg string) {
		line, col := doc.Position(off)
		r.Entries = append(r.Entries, Entry{Severity: SeverityError, Path: p.String(), Line: line, Column: col, Message: msg})
	}
	root := doc.Root
	if root.Kind != jsontree.Object {
		add(nil, root.Offset, fmt.Sprintf("a config is a JSON object, found %s", root.Kind))
		return Version{}, ErrInvalid
	}
	ign := memberSet(root, "ignition")
	if ign == nil || ign.Kind == jsontree.Null {
		add(nil, root.Offset, "ignition.version is missing; supported versions are "+supportedList())
		return Version{}, ErrInvalidVersion
	}
	if ign.Kind != jsontree.Object {
		add(jsonPath{"ignition"}, ign.Offset, fmt.Sprintf("expected an object, found %s", ign.Kind))
		return Version{}, ErrInvalid
	}
	ver := memberSet(ign, "version")
	if ver == nil || ver.Kind == jsontree.Null {
		add(jsonPath{"ignition"}, ign.Offset, "ignition.version is missing; supported versions are "+supportedList())
		return Version{}, ErrInvalidVersion
	}
	if ver.Kind != jsontree.String {
		what := ver.Kind.String()
		if ver.Kind == jsontree.Number {
			what = "number " + ver.Str + ` (write it as a string, e.g. "3.4.0")`
		}
		add(jsonPath{"ignition", "version"}, ver.Offset, fmt.Sprintf("expected a version string, found %s; supported versions are %s", what, supportedList()))
		return Version{}, ErrInvalidVersion
	}
	v, err := ParseVersion(ver.Str)
	if err != nil {
		msg := err.Error()
		if strings.HasPrefix(ver.Str, "1.") || strings.HasPrefix(ver.Str, "2.") {
			msg += "; spec 1.x and 2.x configs must be translated to 3.x first"
		}
		add(jsonPath{"ignition", "version"}, ver.Offset, msg)
		return Version{}, err
	}
	return v, nil
}

// member returns an object's value for key, matched as the decoder matches
// keys (and encoding/json, hence Ignition): every key equal to it when
// case is ignored sets the same field, so the last such member wins.
func member(obj *jsontree.Value, key string) *jsontree.Value {
	var found *jsontree.Value
	for i := range obj.Members {
		if strings.EqualFold(obj.Members[i].Key, key) {
			found = obj.Members[i].Value
		}
	}
	return found
}

// memberSet is member for a key whose model field is a struct or a string,
// on which a null has no effect (as in encoding/json): the value decoded is
// the last one that is not null.
func memberSet(obj *jsontree.Value, key string) *jsontree.Value {
	var found *jsontree.Value
	for i := range obj.Members {
		if m := obj.Members[i]; strings.EqualFold(m.Key, key) && m.Value.Kind != jsontree.Null {
			found = m.Value
		}
	}
	return found
}

// locate returns the byte offset of the value at p, or of its deepest
// ancestor present in the document when p names something absent (a
// required key that is missing, say).
func locate(doc *jsontree.Doc, p jsonPath) int {
	node := doc.Root
	for _, e := range p {
		var next *jsontree.Value
		switch e := e.(type) {
		case string:
			if node.Kind == jsontree.Object {
				next = member(node, e)
			}
		case int:
			if node.Kind == jsontree.Array && e >= 0 && e < len(node.Elems) {
				next = node.Elems[e]
			}
		}
		if next == nil {
			break
		}
		node = next
	}
	return node.Offset
}
