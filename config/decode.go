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

// decoder fills the model from a JSON document, read once, value by value,
// reporting type errors, unused keys (unknown, or newer than the declared
// version), keys matched only by ignoring case, and duplicate keys. A value
// the model has no place for is skipped, not kept.
type decoder struct {
	version Version
	doc     *jsontree.Doc
	r       *jsontree.Reader
	report  *Report
	// path is the JSON path of the value being decoded, pushed and popped
	// as the decoder descends, so that a path is only built when something
	// is reported.
	path jsonPath
	// keys holds the keys read so far of each object being decoded, the
	// innermost last, for finding repeated keys.
	keys []string
}

// newDecoder returns a decoder at doc's top-level value.
func newDecoder(doc *jsontree.Doc, v Version, r *Report) *decoder {
	return &decoder{version: v, doc: doc, r: doc.Reader(), report: r}
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

// decode reads the value at the reader into rv.
func (d *decoder) decode(rv reflect.Value) {
	kind, off := d.r.Peek()
	if kind == jsontree.Null {
		// null clears pointers and lists and leaves anything else as it was,
		// as encoding/json does.
		switch rv.Kind() {
		case reflect.Pointer, reflect.Slice:
			rv.SetZero()
		default:
			d.add(SeverityWarning, nil, off, "null has no effect here; remove the key instead")
		}
		d.r.Skip()
		return
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		d.decode(rv.Elem())
	case reflect.Struct:
		if kind != jsontree.Object {
			d.typeError(kind, off, "an object")
			return
		}
		d.decodeObject(rv)
	case reflect.Slice:
		if kind != jsontree.Array {
			d.typeError(kind, off, "a list")
			return
		}
		// Counted first, so that the list is allocated once at its size:
		// growing it would cost up to twice the memory of a config's
		// hundreds of thousands of files.
		n := d.r.Count()
		if n == 0 {
			// An empty list means what an absent one does; keeping it nil
			// lets a marshalled config round-trip unchanged.
			d.r.Skip()
			rv.SetZero()
			return
		}
		s := reflect.MakeSlice(rv.Type(), n, n)
		i := 0
		for d.r.Begin(); d.r.More(); i++ {
			d.path = append(d.path, i)
			d.decode(s.Index(i))
			d.path = d.path[:len(d.path)-1]
		}
		rv.Set(s)
	case reflect.String:
		if kind != jsontree.String {
			d.typeError(kind, off, "a string")
			return
		}
		rv.SetString(d.r.Str())
	case reflect.Bool:
		if kind != jsontree.Bool {
			d.typeError(kind, off, "true or false")
			return
		}
		rv.SetBool(d.r.Bool())
	case reflect.Int:
		if kind != jsontree.Number {
			d.typeError(kind, off, "an integer")
			return
		}
		lit := d.r.Literal()
		n, err := strconv.ParseInt(lit, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			d.add(SeverityError, nil, off, fmt.Sprintf("%s is out of range for an integer", lit))
		case err != nil:
			d.add(SeverityError, nil, off, fmt.Sprintf("expected an integer, found %s", lit))
		default:
			rv.SetInt(n)
		}
	default:
		panic("config: model field of unsupported kind " + rv.Kind().String())
	}
}

// typeError reports and reads a value of kind, at off, where want belongs.
func (d *decoder) typeError(kind jsontree.Kind, off int, want string) {
	var found string
	switch kind {
	case jsontree.String:
		found = "string " + strconv.Quote(truncate(d.r.Str(), 40))
	case jsontree.Number:
		found = "number " + d.r.Literal()
	case jsontree.Bool:
		found = strconv.FormatBool(d.r.Bool())
	case jsontree.Array:
		found = "a list"
		d.r.Skip()
	default: // only objects: the caller handles null
		found = "an object"
		d.r.Skip()
	}
	d.add(SeverityError, nil, off, fmt.Sprintf("expected %s, found %s", want, found))
}

func (d *decoder) decodeObject(rv reflect.Value) {
	si := structInfos[rv.Type()]
	base := len(d.keys)
	// The model's objects have a handful of keys: comparing each with the
	// ones before it costs less than hashing it into a map, which only
	// pays for the odd object with many (unknown or repeated) keys.
	var seen map[string]bool
	for d.r.Begin(); d.r.More(); {
		key, keyOff := d.r.Key()
		d.keys = append(d.keys, key)
		keys := d.keys[base:]
		if seen == nil && len(keys) > smallObject {
			seen = make(map[string]bool, 2*len(keys))
			for _, k := range keys[:len(keys)-1] {
				seen[k] = true
			}
		}
		if duplicateKey(keys, seen) {
			d.add(SeverityWarning, key, keyOff,
				fmt.Sprintf("duplicate key %s: this later value overrides the earlier one", key))
		}
		f, folded := si.lookup(key)
		if f == nil {
			d.add(SeverityWarning, key, keyOff, "unused key "+key+suggest(key, si))
			d.r.Skip()
			continue
		}
		if f.gated {
			if since, ok := fieldSince[d.genericPath(f.name)]; ok && !d.version.AtLeast(since) {
				d.add(SeverityWarning, key, keyOff, fmt.Sprintf(
					"unused key %s: it was added in spec %s and this config declares %s", key, since, d.version))
				d.r.Skip()
				continue
			}
		}
		if folded {
			// Matched like encoding/json (and so Ignition) does; the
			// value is used, but the spelling is wrong and other tools may
			// ignore it.
			d.add(SeverityWarning, key, keyOff, fmt.Sprintf(
				"key %s differs from %q only in case: it was applied as %q (as Ignition does), but keys are case-sensitive in the spec and other tools ignore it", key, f.name, f.name))
		}
		d.path = append(d.path, f.elem)
		d.decode(rv.FieldByIndex(f.index))
		d.path = d.path[:len(d.path)-1]
	}
	d.keys = d.keys[:base]
}

// smallObject is the most members an object can have for decodeObject to
// find repeated keys by comparing them pairwise.
const smallObject = 8

// duplicateKey reports whether the last of an object's keys so far is
// exactly an earlier one. seen, when not nil, holds the earlier keys and
// gets the last added; when nil, the earlier keys are compared.
func duplicateKey(keys []string, seen map[string]bool) bool {
	key := keys[len(keys)-1]
	if seen != nil {
		dup := seen[key]
		seen[key] = true
		return dup
	}
	for _, k := range keys[:len(keys)-1] {
		if k == key {
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
