package config

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// ValidateAt checks cfg as Parse checks the JSON that WriteJSON writes of
// it when cfg.Ignition.Version is v, without writing and reading that text:
// a translator that has just built a large config (flint translate) needs
// the findings, not a second copy of the config. Entries carry paths but no
// lines, as Validate's do.
//
// ok is false, and the report empty, when the text would not read back as
// cfg: a key the version v lacks is set (Parse warns about it and skips it)
// or a string is not valid UTF-8 (written as U+FFFD). The caller then parses
// the text instead, which is always exact.
func (cfg Config) ValidateAt(v Version) (r Report, ok bool) {
	if !readsBack(cfg, v) {
		return Report{}, false
	}
	c := checker{version: v, report: &r}
	c.config(cfg)
	return r, true
}

// readsBack reports whether WriteJSON's text of cfg, read by Parse at
// version v, gives cfg back as far as the checker can tell: no key is
// written that v does not have, and every string survives encoding.
func readsBack(cfg Config, v Version) bool {
	for p, since := range fieldSince {
		if !v.AtLeast(since) && written(reflect.ValueOf(cfg), strings.Split(p, ".")) {
			return false
		}
	}
	return validStrings(reflect.ValueOf(cfg))
}

// written reports whether WriteJSON writes the key at the generic path
// (no list indices) under v, in any element of the lists on the way.
func written(v reflect.Value, path []string) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil() && written(v.Elem(), path)
	case reflect.Slice:
		for i := range v.Len() {
			if written(v.Index(i), path) {
				return true
			}
		}
		return false
	case reflect.Struct:
		si := structInfos[v.Type()]
		i, ok := si.byName[path[0]]
		if !ok {
			return false
		}
		f := &si.fields[i]
		fv := v.FieldByIndex(f.index)
		if f.omitEmpty && emptyValue(fv) || f.omitZero && fv.IsZero() {
			return false
		}
		return len(path) == 1 || written(fv, path[1:])
	}
	return false
}

// validStrings reports whether every string under v is valid UTF-8.
func validStrings(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer:
		return v.IsNil() || validStrings(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			if !validStrings(v.Index(i)) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !validStrings(v.Field(i)) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if !validStrings(it.Key()) || !validStrings(it.Value()) {
				return false
			}
		}
	}
	return true
}
