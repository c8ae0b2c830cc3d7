package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config/internal/jsontree"
	"github.com/flintboot/flint/config/internal/typo"
)

// fieldInfo describes one JSON key of a model struct.
type fieldInfo struct {
	name  string // JSON key
	elem  any    // name as a path element, boxed once rather than per use
	index []int  // reflect field index, through embedded structs
	// omitEmpty and omitZero are the tag's options, for the encoder.
	omitEmpty, omitZero bool
	// gated is gatedFields[name]: the key might be version-gated.
	gated bool
}

// structInfo lists a struct's JSON keys in declaration order.
type structInfo struct {
	fields []fieldInfo
	byName map[string]int // exact key → position in fields
}

// lookup finds the field for a key the way encoding/json does: an exact match
// first, then a case-insensitive one. folded reports the latter.
func (si *structInfo) lookup(key string) (f *fieldInfo, folded bool) {
	if i, ok := si.byName[key]; ok {
		return &si.fields[i], false
	}
	for i := range si.fields {
		if strings.EqualFold(si.fields[i].name, key) {
			return &si.fields[i], true
		}
	}
	return nil, false
}

// gatedFields holds the last element of every fieldSince path, so that the
// decoder builds a generic path only for keys that might be version-gated.
var gatedFields = func() map[string]bool {
	m := map[string]bool{}
	for p := range fieldSince {
		m[p[strings.LastIndex(p, ".")+1:]] = true
	}
	return m
}()

// structInfos is computed once from the model types and never changed.
var structInfos = buildStructInfos(reflect.TypeFor[Config]())

func buildStructInfos(root reflect.Type) map[reflect.Type]*structInfo {
	infos := map[reflect.Type]*structInfo{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || infos[t] != nil {
			return
		}
		si := &structInfo{byName: map[string]int{}}
		infos[t] = si
		var add func(t reflect.Type, prefix []int)
		add = func(t reflect.Type, prefix []int) {
			for i := 0; i < t.NumField(); i++ {
				sf := t.Field(i)
				idx := append(append([]int{}, prefix...), i)
				if sf.Anonymous {
					add(sf.Type, idx)
					continue
				}
				name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
				si.byName[name] = len(si.fields)
				si.fields = append(si.fields, fieldInfo{name: name, elem: name, index: idx,
					omitEmpty: hasOption(opts, "omitempty"), omitZero: hasOption(opts, "omitzero"), gated: gatedFields[name]})
				visit(sf.Type)
			}
		}
		add(t, nil)
	}
	visit(root)
	return infos
}

// hasOption reports whether a json tag's comma-separated options hold opt.
func hasOption(opts, opt string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == opt {
			return true
		}
	}
	return false
}

// decoder fills the model from a JSON tree, reporting type errors, unused
// keys (unknown, or newer than the declared version), keys matched only by
// ignoring case, and duplicate keys.
type decoder struct {
	version Version
	doc     *jsontree.Doc
	report  *Report
	// path is the JSON path of the value being decoded, pushed and popped
	// as the decoder descends, so that a path is only built when something
	// is reported.
	path jsonPath
}

// add reports a problem with the value being decoded, or with its key elem
// when elem is not nil.
func (d *decoder) add(sev Severity, elem any, offset int, msg string) {
	p := d.path.with()
	if elem != nil {
		p = append(p, elem)
	}
	line, col := d.doc.Position(offset)
	d.report.Entries = append(d.report.Entries, Entry{Severity: sev, Path: p.String(), Line: line, Column: col, Message: msg})
}

// genericPath is the current path without list indices, plus field: the key
// of the fieldSince table.
func (d *decoder) genericPath(field string) string {
	var b strings.Builder
	for _, e := range d.path {
		if s, ok := e.(string); ok {
			b.WriteString(s)
			b.WriteByte('.')
		}
	}
	b.WriteString(field)
	return b.String()
}

// decode stores node into rv.
func (d *decoder) decode(node *jsontree.Value, rv reflect.Value) {
	if node.Kind == jsontree.Null {
		// null clears pointers and lists and leaves anything else as it was,
		// as encoding/json does.
		switch rv.Kind() {
		case reflect.Pointer:
			rv.SetZero()
			return
		case reflect.Slice:
			rv.SetZero()
			return
		}
		d.add(SeverityWarning, nil, node.Offset, "null has no effect here; remove the key instead")
		return
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		d.decode(node, rv.Elem())
	case reflect.Struct:
		if node.Kind != jsontree.Object {
			d.typeError(node, "an object")
			return
		}
		d.decodeObject(node, rv)
	case reflect.Slice:
		if node.Kind != jsontree.Array {
			d.typeError(node, "a list")
			return
		}
		if len(node.Elems) == 0 {
			// An empty list means what an absent one does; keeping it nil
			// lets a marshalled config round-trip unchanged.
			rv.SetZero()
			return
		}
		s := reflect.MakeSlice(rv.Type(), len(node.Elems), len(node.Elems))
		for i, el := range node.Elems {
			d.path = append(d.path, i)
			d.decode(el, s.Index(i))
			d.path = d.path[:len(d.path)-1]
		}
		rv.Set(s)
	case reflect.String:
		if node.Kind != jsontree.String {
			d.typeError(node, "a string")
			return
		}
		rv.SetString(node.Str)
	case reflect.Bool:
		if node.Kind != jsontree.Bool {
			d.typeError(node, "true or false")
			return
		}
		rv.SetBool(node.Bool)
	case reflect.Int:
		if node.Kind != jsontree.Number {
			d.typeError(node, "an integer")
			return
		}
		n, err := strconv.ParseInt(node.Str, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			d.add(SeverityError, nil, node.Offset, fmt.Sprintf("%s is out of range for an integer", node.Str))
		case err != nil:
			d.add(SeverityError, nil, node.Offset, fmt.Sprintf("expected an integer, found %s", node.Str))
		default:
			rv.SetInt(n)
		}
	default:
		panic("config: model field of unsupported kind " + rv.Kind().String())
	}
}

func (d *decoder) typeError(node *jsontree.Value, want string) {
	found := node.Kind.String()
	switch node.Kind {
	case jsontree.String:
		found = "string " + strconv.Quote(truncate(node.Str, 40))
	case jsontree.Number:
		found = "number " + node.Str
	case jsontree.Bool:
		found = strconv.FormatBool(node.Bool)
	case jsontree.Array:
		found = "a list"
	case jsontree.Object:
		found = "an object"
	}
	d.add(SeverityError, nil, node.Offset, fmt.Sprintf("expected %s, found %s", want, found))
}

func (d *decoder) decodeObject(node *jsontree.Value, rv reflect.Value) {
	si := structInfos[rv.Type()]
	// The model's objects have a handful of keys: comparing each with the
	// ones before it costs less than hashing it into a map, which only
	// pays for the odd object with many (unknown or repeated) keys.
	var seen map[string]bool
	if len(node.Members) > smallObject {
		seen = make(map[string]bool, len(node.Members))
	}
	for i, m := range node.Members {
		if duplicateKey(node.Members, i, seen) {
			d.add(SeverityWarning, m.Key, m.KeyOffset,
				fmt.Sprintf("duplicate key %s: this later value overrides the earlier one", m.Key))
		}
		f, folded := si.lookup(m.Key)
		if f == nil {
			d.add(SeverityWarning, m.Key, m.KeyOffset, "unused key "+m.Key+suggest(m.Key, si))
			continue
		}
		if f.gated {
			if since, ok := fieldSince[d.genericPath(f.name)]; ok && !d.version.AtLeast(since) {
				d.add(SeverityWarning, m.Key, m.KeyOffset, fmt.Sprintf(
					"unused key %s: it was added in spec %s and this config declares %s", m.Key, since, d.version))
				continue
			}
		}
		if folded {
			// Matched like encoding/json (and so Ignition) does; the
			// value is used, but the spelling is wrong and other tools may
			// ignore it.
			d.add(SeverityWarning, m.Key, m.KeyOffset, fmt.Sprintf(
				"key %s differs from %q only in case: it was applied as %q (as Ignition does), but keys are case-sensitive in the spec and other tools ignore it", m.Key, f.name, f.name))
		}
		d.path = append(d.path, f.elem)
		d.decode(m.Value, rv.FieldByIndex(f.index))
		d.path = d.path[:len(d.path)-1]
	}
}

// smallObject is the most members an object can have for decodeObject to
// find repeated keys by comparing them pairwise.
const smallObject = 8

// duplicateKey reports whether members[i]'s key is exactly that of an
// earlier member. seen, when not nil, holds the keys before i and gets
// members[i]'s added; when nil, the earlier members are compared.
func duplicateKey(members []jsontree.Member, i int, seen map[string]bool) bool {
	key := members[i].Key
	if seen != nil {
		dup := seen[key]
		seen[key] = true
		return dup
	}
	for _, m := range members[:i] {
		if m.Key == key {
			return true
		}
	}
	return false
}

// suggest offers the closest known key when it is close enough to be a typo.
func suggest(key string, si *structInfo) string {
	names := make([]string, len(si.fields))
	for i, f := range si.fields {
		names[i] = f.name
	}
	best := typo.Closest(key, names)
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
