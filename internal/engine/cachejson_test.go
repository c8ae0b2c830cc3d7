package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/flintboot/flint/config"
)

// fill sets every field of v, through pointers and slices (two elements
// each), to a distinct value: strings with characters JSON escapes.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), n)
		fill(v.Index(1), n)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d <&> \"q\" \\ / \t\x01 é 😀 \u2028 data:,a%%20b", *n))
	case reflect.Int:
		v.SetInt(int64(*n) * -7)
	case reflect.Bool:
		v.SetBool(*n%2 == 0)
	default:
		panic("fill: unhandled " + v.Type().String())
	}
}

// TestDecodeCacheRoundTrip: every field of the config, written by
// json.Marshal as the fetch stage writes the cache, reads back as
// json.Unmarshal reads it.
func TestDecodeCacheRoundTrip(t *testing.T) {
	var cfg config.Config
	n := 0
	fill(reflect.ValueOf(&cfg).Elem(), &n)
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got, want config.Config
	if err := decodeCache(raw, &got); err != nil {
		t.Fatalf("decodeCache: %v", err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, cfg) {
		t.Errorf("decodeCache read\n%+v\nwant\n%+v", got, want)
	}
}

// TestDecodeCacheAsUnmarshal: on JSON json.Marshal does not write (other
// case, unknown keys, nulls, escapes, invalid UTF-8, errors), decodeCache
// agrees with json.Unmarshal: the same config, or an error for both.
func TestDecodeCacheAsUnmarshal(t *testing.T) {
	for _, in := range []string{
		`{}`, ` {"ignition":{"version":"3.7.0-experimental"}} `, `null`,
		`{"IGNITION":{"Version":"3.4.0"},"unknown":{"a":[1,-2.5e+3,true,false,null,"x",{"b":[]}]}}`,
		`{"storage":{"files":[{"path":"/a","mode":420,"overwrite":true,"user":{"id":0},"contents":{"source":null}}],"links":[{"path":"/l","hard":false,"target":"/t"}]}}`,
		`{"storage":{"files":[{"path":"/a"}],"files":[]}}`,
		`{"storage":{"files":null}}`,
		`{"passwd":{"users":[{"name":"\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\","sshAuthorizedKeys":["k"]}]}}`,
		`{"passwd":{"users":[{"name":"lone \ud800 half \udc00 and \ud800\u0041"}]}}`,
		"{\"passwd\":{\"users\":[{\"name\":\"bad \xff\xfe utf8 \xe2\x82\"}]}}",
		"{\"passwd\":{\"users\":[{\"name\":\"bad \xff\\n utf8\"}]}}",
		// Errors.
		``, `{`, `{"ignition":`, `{"ignition":{"version":"3.4.0"}`, `{"a":1,}`, `{"a" 1}`, `[]`, `"x"`,
		`{} {}`, `{}x`, `{"storage":{"files":[{"path":1}]}}`, `{"storage":{"files":[{"mode":"420"}]}}`,
		`{"storage":{"files":[{"mode":4.5}]}}`, `{"storage":{"files":[{"mode":99999999999999999999}]}}`,
		`{"storage":{"files":[{"mode":01}]}}`, `{"storage":{"files":[{"mode":-}]}}`, `{"storage":{"files":{}}}`,
		`{"storage":{"files":[{"overwrite":"yes"}]}}`, `{"storage":{"files":[{"overwrite":tru}]}}`,
		"{\"ignition\":{\"version\":\"a\x01b\"}}", `{"ignition":{"version":"\x"}}`, `{"ignition":{"version":"\u12"}}`,
		`{"ignition":{"version":"unterminated}}`, `{"x":[1 2]}`, `{"x":nul}`, `{"x":.5}`, `{"x":1.}`, `{"x":1e}`,
	} {
		var got, want config.Config
		gerr := decodeCache([]byte(in), &got)
		werr := json.Unmarshal([]byte(in), &want)
		switch {
		case (gerr == nil) != (werr == nil):
			t.Errorf("%q: decodeCache error %v, json.Unmarshal error %v", in, gerr, werr)
		case gerr == nil && !reflect.DeepEqual(got, want):
			t.Errorf("%q: decodeCache read\n%+v\nwant\n%+v", in, got, want)
		}
	}
}
