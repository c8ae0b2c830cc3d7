package jsontree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// node is a value read whole with a Reader, for the tests to compare.
type node struct {
	Kind    Kind
	Offset  int
	Str     string // a string's text or a number's literal
	Bool    bool
	Elems   []*node
	Members []member
}

type member struct {
	Key       string
	KeyOffset int
	Value     *node
}

// read reads the value at r whole, checking on the way that Count agrees
// with what More finds.
func read(t testing.TB, r *Reader) *node {
	kind, off := r.Peek()
	n := &node{Kind: kind, Offset: off}
	switch n.Kind {
	case String:
		n.Str = r.Str()
	case Number:
		n.Str = r.Literal()
	case Bool:
		n.Bool = r.Bool()
	case Null:
		r.Skip()
	case Array:
		count := r.Count()
		for r.Begin(); r.More(); {
			n.Elems = append(n.Elems, read(t, r))
		}
		if count != len(n.Elems) {
			t.Fatalf("Count() = %d at offset %d, More yields %d", count, n.Offset, len(n.Elems))
		}
	case Object:
		for r.Begin(); r.More(); {
			k, off := r.Key()
			n.Members = append(n.Members, member{k, off, read(t, r)})
		}
	}
	return n
}

// root reads a document's top-level value whole.
func root(t testing.TB, d *Doc) *node {
	return read(t, d.Reader())
}

// dump renders a tree compactly: kinds, decoded strings (quoted with Go
// syntax), number literals, and every member in order, duplicates included.
func dump(v *node) string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		return strconv.FormatBool(v.Bool)
	case Number:
		return "#" + v.Str
	case String:
		return strconv.Quote(v.Str)
	case Array:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = dump(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		parts := make([]string, len(v.Members))
		for i, m := range v.Members {
			parts[i] = strconv.Quote(m.Key) + ":" + dump(m.Value)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{`null`, `null`},
		{`true`, `true`},
		{`false`, `false`},
		{` 0 `, `#0`},
		{`-0`, `#-0`},
		{`12345678901234567890123`, `#12345678901234567890123`},
		{`1.5e-3`, `#1.5e-3`},
		{`1E+2`, `#1E+2`},
		{`-0.0e0`, `#-0.0e0`},
		{`""`, `""`},
		{`"plain"`, `"plain"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{"\t\r\n [ 1 , \"a\" , null ]\n", `[#1,"a",null]`},
		{`{"a":{"b":[{}]}}`, `{"a":{"b":[{}]}}`},
		{`{"k":1,"k":2}`, `{"k":#1,"k":#2}`},
		{`{"":0}`, `{"":#0}`},
		{`{"K":1,"k":2}`, `{"K":#1,"k":#2}`},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.in))
		if err != nil {
			t.Errorf("Parse(%q) error = %v", tt.in, err)
			continue
		}
		if got := dump(root(t, d)); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseStrings(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\u0041\u00e9\u20AC"`, "Aé€"},
		{`"\u0000"`, "\x00"},
		{`"é€😀"`, "é€😀"},
		// A surrogate pair is one character.
		{`"\uD83D\uDE00"`, "😀"},
		{`"\ud83d\ude00x"`, "😀x"},
		// Lone or mismatched surrogates become U+FFFD, as encoding/json
		// decodes them; what follows is kept.
		{`"\ud800"`, "\uFFFD"},
		{`"\udc00"`, "\uFFFD"},
		{`"\ud800x"`, "\uFFFDx"},
		{`"\ud800\u0041"`, "\uFFFDA"},
		{`"\ud800\ud800"`, "\uFFFD\uFFFD"},
		{`"\ud800\ud800\udc00"`, "\uFFFD𐀀"},
		{`"\udc00\ud800"`, "\uFFFD\uFFFD"},
		// Invalid UTF-8 becomes U+FFFD too, one per bad byte.
		{"\"a\xffb\"", "a\uFFFDb"},
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},
		{"\"\xc3\"", "\uFFFD"},
		{"\"\xc3\\n\"", "\uFFFD\n"},
		// DEL and other non-control characters need no escape.
		{"\"\x7f\"", "\x7f"},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.in))
		if err != nil {
			t.Errorf("Parse(%q) error = %v", tt.in, err)
			continue
		}
		if root(t, d).Kind != String || root(t, d).Str != tt.want {
			t.Errorf("Parse(%q) = %s, want %q", tt.in, dump(root(t, d)), tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in        string
		line, col int
		msg       string
	}{
		// Empty input and whitespace.
		{"", 1, 1, "empty input: not a config"},
		{" \n\t", 2, 2, "no JSON value, only whitespace"},
		{"\ufeff{}", 1, 1, "file starts with a UTF-8 byte order mark"},
		// Not JSON whitespace.
		{"\v{}", 1, 1, "unexpected control character U+000B: expected a value"},
		{"{}\f", 1, 3, "unexpected control character U+000C after the end"},
		// Literals.
		{"tru", 1, 4, "unexpected end of input in literal true"},
		{"nul1", 1, 4, "unexpected character '1' in literal null"},
		{"True", 1, 1, "unexpected character 'T': expected a value"},
		{"nullx", 1, 5, "unexpected character 'x' after the end of the top-level value"},
		// Numbers.
		{"01", 1, 1, "number has a leading zero"},
		{"-01", 1, 2, "number has a leading zero"},
		{"-", 1, 2, "unexpected end of input in number: expected a digit"},
		{"-a", 1, 2, "unexpected character 'a' in number"},
		{"+1", 1, 1, "unexpected character '+': expected a value"},
		{".5", 1, 1, "unexpected character '.': expected a value"},
		{"1.", 1, 3, "unexpected end of input after decimal point"},
		{"1.e5", 1, 3, "unexpected character 'e' after decimal point"},
		{"1e", 1, 3, "unexpected end of input in exponent"},
		{"1e+", 1, 4, "unexpected end of input in exponent"},
		{"0x10", 1, 2, "unexpected character 'x' after the end"},
		{"1e5.0", 1, 4, "unexpected character '.' after the end"},
		{"[1 2]", 1, 4, "unexpected character '2': expected ',' or ']' after array element"},
		// Strings.
		{`"abc`, 1, 1, `string is not closed with '"'`},
		{`"abc\`, 1, 5, `string is not closed with '"'`},
		{`"\x"`, 1, 2, `invalid escape in string: backslash followed by character 'x'`},
		{`"\'"`, 1, 2, `invalid escape in string: backslash followed by character '\''`},
		{`"\u12"`, 1, 2, `invalid \u escape: expected four hex digits`},
		{`"\u12g4"`, 1, 2, `invalid \u escape`},
		{`"\ud800\u12"`, 1, 8, `invalid \u escape`},
		{"\"a\tb\"", 1, 3, "control character U+0009 in string"},
		{"\"a\nb\"", 1, 3, "control character U+000A in string"},
		{"\"\x00\"", 1, 2, "control character U+0000 in string"},
		// Arrays and objects.
		{"[1,]", 1, 4, "trailing comma before ']'"},
		{"[,1]", 1, 2, "unexpected character ',': expected a value"},
		{"[1", 1, 3, "unexpected end of input: the list opened at line 1 col 1 is not closed with ']'"},
		{"[", 1, 2, "unexpected end of input: a value is missing"},
		{`{"a":1,}`, 1, 8, "trailing comma before '}'"},
		{`{,}`, 1, 2, "unexpected character ',': expected a quoted object key"},
		{`{a:1}`, 1, 2, "unexpected character 'a': expected a quoted object key"},
		{`{'a':1}`, 1, 2, "unexpected character '\\'': expected a quoted object key"},
		{`{"a" 1}`, 1, 6, `unexpected character '1': expected ':' after key "a"`},
		{`{"a"}`, 1, 5, `unexpected character '}': expected ':' after key "a"`},
		{`{"a":}`, 1, 6, "unexpected character '}': expected a value"},
		{`{"a":1 "b":2}`, 1, 8, `expected ',' or '}' after object member "a"`},
		{"{\n  \"a\": [1,\n        2\n", 4, 1, "the list opened at line 2 col 8 is not closed with ']'"},
		{"{\n  \"a\": 1\n", 3, 1, "the object opened at line 1 col 1 is not closed with '}'"},
		{`{"a":1}}`, 1, 8, "unexpected character '}' after the end of the top-level value"},
		{"{} {}", 1, 4, "unexpected character '{' after the end"},
		// Bytes that are not UTF-8 outside strings.
		{"[\xff]", 1, 2, "unexpected byte 0xff: expected a value"},
		// Positions count characters, not bytes.
		{"[\"é€😀\", x]", 1, 9, "unexpected character 'x': expected a value"},
		{"{\r\n\"é\":\r\n  tru }", 3, 6, "unexpected character ' ' in literal true"},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v, want a syntax error", tt.in, d, err)
			continue
		}
		if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Parse(%q) = line %d col %d %q, want line %d col %d %q", tt.in, se.Line, se.Column, se.Msg, tt.line, tt.col, tt.msg)
		}
		if want := fmt.Sprintf("line %d col %d: %s", se.Line, se.Column, se.Msg); se.Error() != want {
			t.Errorf("SyntaxError.Error() = %q, want %q", se.Error(), want)
		}
	}
}

// TestDepthLimit checks nesting is bounded the way encoding/json bounds it,
// at MaxDepth rather than its 10,000: MaxDepth nested arrays or objects are
// fine, whatever they hold, and one more is an error.
func TestDepthLimit(t *testing.T) {
	nest := func(n int, open, inner, close string) []byte {
		return []byte(strings.Repeat(open, n) + inner + strings.Repeat(close, n))
	}
	ok := [][]byte{
		nest(MaxDepth, "[", "", "]"),
		nest(MaxDepth, "[", "1", "]"),
		nest(MaxDepth, "[", `"s"`, "]"),
		nest(MaxDepth, `{"a":`, "null", "}"),
		nest(MaxDepth-1, "[", "{}", "]"),
	}
	for _, in := range ok {
		if _, err := Parse(in); err != nil {
			t.Errorf("Parse(%.20s… %d bytes) error = %v, want nesting of %d accepted", in, len(in), err, MaxDepth)
		}
	}
	bad := [][]byte{
		nest(MaxDepth+1, "[", "", "]"),
		nest(MaxDepth+1, "[", "1", "]"),
		nest(MaxDepth+1, `{"a":`, "0", "}"),
		nest(MaxDepth, "[", "{}", "]"),
		[]byte(strings.Repeat("[", 1<<20)),
	}
	for _, in := range bad {
		_, err := Parse(in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Msg != "nesting deeper than 100 levels" {
			t.Errorf("Parse(%.20s… %d bytes) error = %v, want the depth limit", in, len(in), err)
		}
	}
}

func TestOffsets(t *testing.T) {
	src := "{\n  \"a\": [1, {\"é\": true}],\n  \"b\": \"x\"\n}"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	root := root(t, d)
	at := func(what string, off, line, col int) {
		t.Helper()
		l, c := d.Position(off)
		if l != line || c != col {
			t.Errorf("%s at line %d col %d, want line %d col %d", what, l, c, line, col)
		}
	}
	at("root", root.Offset, 1, 1)
	at("key a", root.Members[0].KeyOffset, 2, 3)
	at("value of a", root.Members[0].Value.Offset, 2, 8)
	at("a[0]", root.Members[0].Value.Elems[0].Offset, 2, 9)
	inner := root.Members[0].Value.Elems[1]
	at("a[1]", inner.Offset, 2, 12)
	at("key é", inner.Members[0].KeyOffset, 2, 13)
	at("value of é", inner.Members[0].Value.Offset, 2, 18) // é is one column
	at("key b", root.Members[1].KeyOffset, 3, 3)
	at("value of b", root.Members[1].Value.Offset, 3, 8)
	if inner.Members[0].Key != "é" {
		t.Errorf("key = %q, want é", inner.Members[0].Key)
	}
}

func TestPosition(t *testing.T) {
	src := "ab\n\u00e9\u20ac\U0001F600x\r\n\xffz\n"
	d := &Doc{text: src}
	tests := []struct{ off, line, col int }{
		{0, 1, 1},
		{2, 1, 3},  // the newline itself ends line 1
		{3, 2, 1},  // é
		{5, 2, 2},  // € after a 2-byte é
		{8, 2, 3},  // 😀 after a 3-byte €
		{12, 2, 4}, // x after a 4-byte 😀
		{13, 2, 5}, // \r counts as a character
		{15, 3, 1}, // an invalid byte is one column
		{16, 3, 2},
		{17, 3, 3},
		{18, 4, 1},  // end of input, after the last newline
		{999, 4, 1}, // clamped
	}
	for _, tt := range tests {
		if l, c := d.Position(tt.off); l != tt.line || c != tt.col {
			t.Errorf("Position(%d) = line %d col %d, want line %d col %d", tt.off, l, c, tt.line, tt.col)
		}
	}
}

// TestRecorded checks what Parse records for readers: the top-level keys'
// offsets, and the counts of long arrays, which Count returns without
// reading the array, the same as reading it.
func TestRecorded(t *testing.T) {
	long := "[" + strings.Repeat("[1,2],", countedArray) + "{}]" // countedArray+1 elements
	src := `{"a": 1, "b": ` + long + `, "a": {"c": [` + strings.TrimSuffix(strings.Repeat("0,", countedArray), ",") + `]}}`
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, off := range d.TopKeys() {
		k, _ := d.At(off).Key()
		keys = append(keys, k)
	}
	if got := strings.Join(keys, " "); got != "a b a" {
		t.Errorf("TopKeys() read as %q, want \"a b a\"", got)
	}
	if len(d.counts) != 2 {
		t.Errorf("Parse recorded %d counts, want 2 (the arrays of %d elements or more)", len(d.counts), countedArray)
	}
	// read checks Count against More for every array.
	if got := len(root(t, d).Members[1].Value.Elems); got != countedArray+1 {
		t.Errorf("b has %d elements, want %d", got, countedArray+1)
	}
	if d, _ := Parse([]byte(`[{"a":1}]`)); len(d.TopKeys()) != 0 {
		t.Errorf("TopKeys() of an array = %v, want none", d.TopKeys())
	}
}
