package config

import (
	"bufio"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
)

// WriteJSON writes cfg to w exactly as json.Marshal encodes it, byte for
// byte, but streamed: json.Marshal builds the whole encoding in a buffer it
// grows by doubling, then copies it, which for a config of thousands of
// files means megabytes allocated, cleared and copied several times over.
// The fetch stage writes its config cache with it.
func (cfg Config) WriteJSON(w io.Writer) error {
	e := encoder{w: bufio.NewWriterSize(w, 64<<10)}
	e.value(reflect.ValueOf(&cfg).Elem())
	// bufio.Writer keeps its first error and Flush returns it.
	return e.w.Flush()
}

// encoder writes the model's values as encoding/json does. The model holds
// only structs, strings, bools, ints, pointers and slices (the decoder
// accepts nothing else) and no type with a method of its own for JSON.
type encoder struct {
	w   *bufio.Writer
	num []byte // scratch for integers
}

func (e *encoder) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			e.w.WriteString("null")
			return
		}
		e.value(v.Elem())
	case reflect.Struct:
		e.object(v)
	case reflect.Slice:
		if v.IsNil() {
			e.w.WriteString("null")
			return
		}
		e.w.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				e.w.WriteByte(',')
			}
			e.value(v.Index(i))
		}
		e.w.WriteByte(']')
	case reflect.String:
		e.string(v.String())
	case reflect.Bool:
		if v.Bool() {
			e.w.WriteString("true")
		} else {
			e.w.WriteString("false")
		}
	case reflect.Int:
		e.num = strconv.AppendInt(e.num[:0], v.Int(), 10)
		e.w.Write(e.num)
	default:
		panic("config: model field of unsupported kind " + v.Kind().String())
	}
}

// object writes a struct's fields in declaration order (embedded structs'
// in their place), leaving out those their tag's omitempty or omitzero
// say to, as encoding/json does.
func (e *encoder) object(v reflect.Value) {
	si := structInfos[v.Type()]
	e.w.WriteByte('{')
	first := true
	for i := range si.fields {
		f := &si.fields[i]
		fv := v.FieldByIndex(f.index)
		if f.omitEmpty && emptyValue(fv) || f.omitZero && fv.IsZero() {
			continue
		}
		if !first {
			e.w.WriteByte(',')
		}
		first = false
		e.string(f.name)
		e.w.WriteByte(':')
		e.value(fv)
	}
	e.w.WriteByte('}')
}

// emptyValue is encoding/json's notion of empty, for omitempty: a struct is
// never empty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int:
		return v.Int() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// string writes s quoted. Text that encoding/json writes as it is (printable
// ASCII but for the quote, the backslash and the HTML characters it escapes)
// is written directly; anything else is encoded by encoding/json itself, so
// escapes, invalid UTF-8 and U+2028/U+2029 come out exactly as it writes
// them.
func (e *encoder) string(s string) {
	for i := 0; i < len(s); i++ {
		if !plainJSONString[s[i]] {
			b, err := json.Marshal(s)
			if err != nil {
				panic("config: encoding/json cannot encode a string: " + err.Error())
			}
			e.w.Write(b)
			return
		}
	}
	e.w.WriteByte('"')
	e.w.WriteString(s)
	e.w.WriteByte('"')
}

// plainJSONString marks the bytes encoding/json writes in a string unescaped
// (with HTML escaping on, as json.Marshal has it), ASCII only.
var plainJSONString = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		switch b {
		case '"', '\\', '<', '>', '&':
		default:
			t[b] = true
		}
	}
	return t
}()
