package engine

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flintboot/flint/config"
)

// errCacheSyntax means the config cache is not the JSON the fetch stages
// write (truncated, or not JSON at all).
var errCacheSyntax = errors.New("not valid JSON")

// decodeCache reads the config cache (the reference's format: JSON of the
// rendered config) in one pass. json.Unmarshal reads its input twice, a
// validity scan then the decoding, and the scan steps through every byte of
// the cache's large data URLs. It reads JSON as json.Unmarshal does for the
// config's types: keys match a field's json name exactly or else ignoring
// case; unknown keys are skipped; null leaves a field as it is (a pointer or
// slice: nil); a value of the wrong type, a number out of range, a control
// character in a string or anything after the config is an error.
func decodeCache(raw []byte, cfg *config.Config) error {
	d := cacheDecoder{data: raw, fields: map[reflect.Type]map[string][]int{}}
	if err := d.value(reflect.ValueOf(cfg).Elem(), 0); err != nil {
		return err
	}
	d.space()
	if d.pos != len(d.data) {
		return d.syntax("data after the config")
	}
	return nil
}

// maxCacheDepth bounds nesting, as json.Unmarshal's 10,000 levels do.
const maxCacheDepth = 10000

type cacheDecoder struct {
	data []byte
	pos  int
	// fields maps a struct type's json names to field indexes.
	fields map[reflect.Type]map[string][]int
}

func (d *cacheDecoder) syntax(what string) error {
	return fmt.Errorf("%w: %s at offset %d", errCacheSyntax, what, d.pos)
}

func (d *cacheDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes the next value into v.
func (d *cacheDecoder) value(v reflect.Value, depth int) error {
	if depth > maxCacheDepth {
		return d.syntax("nesting too deep")
	}
	d.space()
	if d.pos >= len(d.data) {
		return d.syntax("unexpected end")
	}
	c := d.data[d.pos]
	if c == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
		if k := v.Kind(); k == reflect.Pointer || k == reflect.Slice {
			v.SetZero()
		}
		return nil
	}
	mismatch := func() error {
		return fmt.Errorf("cannot read the value at offset %d into %s", d.pos, v.Type())
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(v.Elem(), depth)
	case reflect.Struct:
		if c != '{' {
			return mismatch()
		}
		return d.object(v, depth)
	case reflect.Slice:
		if c != '[' {
			return mismatch()
		}
		d.pos++
		s := reflect.MakeSlice(v.Type(), 0, 0)
		for first := true; ; first = false {
			if done, err := d.next(']', first); done || err != nil {
				v.Set(s)
				return err
			}
			s = reflect.Append(s, reflect.Zero(v.Type().Elem()))
			if err := d.value(s.Index(s.Len()-1), depth+1); err != nil {
				return err
			}
		}
	case reflect.String:
		if c != '"' {
			return mismatch()
		}
		s, err := d.str()
		v.SetString(s)
		return err
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if c != '-' && (c < '0' || c > '9') {
			return mismatch()
		}
		start := d.pos
		if err := d.number(); err != nil {
			return err
		}
		n, err := strconv.ParseInt(string(d.data[start:d.pos]), 10, 64)
		if err != nil || v.OverflowInt(n) {
			return fmt.Errorf("cannot read the number %s at offset %d into %s", d.data[start:d.pos], start, v.Type())
		}
		v.SetInt(n)
		return nil
	case reflect.Bool:
		switch c {
		case 't':
			v.SetBool(true)
			return d.literal("true")
		case 'f':
			v.SetBool(false)
			return d.literal("false")
		}
		return mismatch()
	}
	return fmt.Errorf("cannot read into %s", v.Type())
}

// next moves past a ',' between members or elements and reports whether
// close ends the object or array instead.
func (d *cacheDecoder) next(close byte, first bool) (bool, error) {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == close {
		d.pos++
		return true, nil
	}
	if !first {
		if d.pos >= len(d.data) || d.data[d.pos] != ',' {
			return false, d.syntax("expected ',' or '" + string(close) + "'")
		}
		d.pos++
		d.space()
	}
	if d.pos >= len(d.data) {
		return false, d.syntax("unexpected end")
	}
	return false, nil
}

// object decodes an object into the struct v; unknown members are
// skipped.
func (d *cacheDecoder) object(v reflect.Value, depth int) error {
	fields := d.structFields(v.Type())
	d.pos++
	for first := true; ; first = false {
		if done, err := d.next('}', first); done || err != nil {
			return err
		}
		if d.data[d.pos] != '"' {
			return d.syntax("expected a member name")
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.syntax("expected ':'")
		}
		d.pos++
		index, ok := fields[key]
		if !ok {
			for name, i := range fields {
				if strings.EqualFold(name, key) {
					index, ok = i, true
					break
				}
			}
		}
		if !ok {
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			continue
		}
		if err := d.value(v.FieldByIndex(index), depth+1); err != nil {
			return err
		}
	}
}

// structFields lists a struct's members by json name, with the fields of
// embedded structs promoted as encoding/json does.
func (d *cacheDecoder) structFields(t reflect.Type) map[string][]int {
	if m, ok := d.fields[t]; ok {
		return m
	}
	m := map[string][]int{}
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" || (f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct) {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		// The shallower of two fields with the same name wins.
		if old, taken := m[tag]; !taken || len(f.Index) < len(old) {
			m[tag] = f.Index
		}
	}
	d.fields[t] = m
	return m
}

// skip moves past a value nothing reads, checking it is JSON.
func (d *cacheDecoder) skip(depth int) error {
	if depth > maxCacheDepth {
		return d.syntax("nesting too deep")
	}
	d.space()
	if d.pos >= len(d.data) {
		return d.syntax("unexpected end")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		d.pos++
		for first := true; ; first = false {
			if done, err := d.next('}', first); done || err != nil {
				return err
			}
			if d.data[d.pos] != '"' {
				return d.syntax("expected a member name")
			}
			if _, err := d.str(); err != nil {
				return err
			}
			d.space()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return d.syntax("expected ':'")
			}
			d.pos++
			if err := d.skip(depth + 1); err != nil {
				return err
			}
		}
	case c == '[':
		d.pos++
		for first := true; ; first = false {
			if done, err := d.next(']', first); done || err != nil {
				return err
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
		}
	case c == '"':
		_, err := d.str()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return d.syntax(fmt.Sprintf("unexpected %q", d.data[d.pos]))
}

func (d *cacheDecoder) literal(word string) error {
	if !strings.HasPrefix(string(d.data[d.pos:min(d.pos+len(word), len(d.data))]), word) {
		return d.syntax("expected " + word)
	}
	d.pos += len(word)
	return nil
}

// number moves past a number as JSON writes it.
func (d *cacheDecoder) number() error {
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		return d.syntax("expected a digit")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return d.syntax("expected a digit")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return d.syntax("expected a digit")
		}
	}
	return nil
}

// str reads a string at the opening quote. A string without escapes (a
// data URL) is one scan and one copy; in others each byte of invalid UTF-8
// becomes U+FFFD, as in json.Unmarshal.
func (d *cacheDecoder) str() (string, error) {
	d.pos++
	start := d.pos
	ascii := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			s := d.data[start:d.pos]
			d.pos++
			if ascii || utf8.Valid(s) {
				return string(s), nil
			}
			d.pos = start
			return d.escaped()
		case c == '\\':
			d.pos = start
			return d.escaped()
		case c < 0x20:
			return "", d.syntax("control character in a string")
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.pos++
	}
	return "", d.syntax("unterminated string")
}

// escaped reads the rest of a string that has escapes, from its first
// byte.
func (d *cacheDecoder) escaped() (string, error) {
	var b strings.Builder
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return b.String(), nil
		case c < 0x20:
			return "", d.syntax("control character in a string")
		case c == '\\':
			if d.pos+1 >= len(d.data) {
				return "", d.syntax("unterminated string")
			}
			d.pos += 2
			switch e := d.data[d.pos-1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", d.syntax("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					// A pair makes one rune; a lone half is U+FFFD.
					r2 := rune(-1)
					if save := d.pos; d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
						d.pos += 2
						if r2, ok = d.hex4(); !ok {
							return "", d.syntax("invalid \\u escape")
						}
						if utf16.DecodeRune(r, r2) == utf8.RuneError {
							d.pos = save
							r2 = -1
						}
					}
					if r2 < 0 {
						r = utf8.RuneError
					} else {
						r = utf16.DecodeRune(r, r2)
					}
				}
				b.WriteRune(r)
			default:
				return "", d.syntax("invalid escape")
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			b.WriteRune(r)
			d.pos += size
		}
	}
	return "", d.syntax("unterminated string")
}

// hex4 reads the four hex digits of a \u escape.
func (d *cacheDecoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d.data[d.pos:d.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.pos += 4
	return rune(n), true
}
