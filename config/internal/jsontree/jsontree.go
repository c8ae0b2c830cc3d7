// Package jsontree parses JSON (RFC 8259) into a tree that remembers where
// every key and value starts, keeps object members in order (duplicates
// included), and reports syntax errors with their real line and column.
//
// encoding/json gives only a byte offset for syntax errors and none at all for
// values, and folds duplicate keys silently; a config validator needs all
// three.
package jsontree

import (
	"encoding/binary"
	"fmt"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a value.
type Kind uint8

// The JSON value kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	default:
		return "object"
	}
}

// MaxDepth bounds nesting, as encoding/json does, so hostile input cannot
// exhaust the stack.
const MaxDepth = 10000

// Value is one JSON value. Str holds a string's decoded text or a number's
// literal; Elems an array's elements; Members an object's members in order.
// Kind and Bool come last, together, so that they share one word: a large
// config has hundreds of thousands of values.
type Value struct {
	Offset  int // byte offset of the value's first character
	Str     string
	Elems   []*Value
	Members []Member
	Kind    Kind
	Bool    bool
}

// Member is one "key": value pair of an object.
type Member struct {
	Key       string
	KeyOffset int
	Value     *Value
}

// Doc is a parsed document with its source, for turning offsets into lines
// and columns.
type Doc struct {
	Root  *Value
	src   []byte
	lines []int // byte offsets at which lines start, computed on first use
}

// SyntaxError is a JSON syntax error at a line and column (both from 1).
type SyntaxError struct {
	Line, Column int
	Offset       int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d col %d: %s", e.Line, e.Column, e.Msg)
}

// Parse parses one JSON document. Anything but whitespace after it is an error.
func Parse(src []byte) (*Doc, error) {
	d := &Doc{src: src}
	p := parser{src: src, text: string(src), doc: d}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		return nil, p.errAt(0, "file starts with a UTF-8 byte order mark; save it without one")
	}
	p.skipSpace()
	if p.pos >= len(src) {
		if len(src) == 0 {
			return nil, p.errAt(0, "empty input: not a config")
		}
		return nil, p.errAt(p.pos, "no JSON value, only whitespace")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(src) {
		return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s after the end of the top-level value", p.describe(p.pos)))
	}
	d.Root = v
	return d, nil
}

// Position turns a byte offset into a line and a column, both counted from 1;
// the column counts characters, not bytes, as an editor does.
func (d *Doc) Position(offset int) (line, col int) {
	return position(d.src, &d.lines, offset)
}

func position(src []byte, lines *[]int, offset int) (int, int) {
	if *lines == nil {
		ls := []int{0}
		for i, c := range src {
			if c == '\n' {
				ls = append(ls, i+1)
			}
		}
		*lines = ls
	}
	if offset > len(src) {
		offset = len(src)
	}
	ls := *lines
	i := sort.Search(len(ls), func(i int) bool { return ls[i] > offset }) - 1
	return i + 1, utf8.RuneCount(src[ls[i]:offset]) + 1
}

type parser struct {
	src []byte
	// text is src as one string, which the tree's strings and numbers are
	// cut from: one copy of the document instead of an allocation per
	// string (a large config has tens of thousands). They keep all of it
	// alive as long as any of them is; a config is small next to what it
	// describes.
	text string
	pos  int
	doc  *Doc
	// values is the current block new values are carved from, one
	// allocation for many: a large config has hundreds of thousands.
	values []Value
	// members and elems are stacks on which the objects and arrays being
	// parsed collect their contents, each copied out once complete into a
	// slice of its exact size, instead of growing one slice per object.
	members []Member
	elems   []*Value
	// memberBlock and elemBlock are what complete objects' members and
	// arrays' elements are copied into, a slice of each carved per object
	// or array, capped at its length.
	memberBlock []Member
	elemBlock   []*Value
}

// blockMembers is how many members (and elements) the parser allocates
// at a time for complete objects (and arrays).
const blockMembers = 512

// keepMembers copies the members of a complete object out of the stack.
func (p *parser) keepMembers(ms []Member) []Member {
	if len(ms) > blockMembers/4 {
		return append([]Member(nil), ms...)
	}
	if cap(p.memberBlock)-len(p.memberBlock) < len(ms) {
		p.memberBlock = make([]Member, 0, blockMembers)
	}
	start := len(p.memberBlock)
	p.memberBlock = append(p.memberBlock, ms...)
	return p.memberBlock[start:len(p.memberBlock):len(p.memberBlock)]
}

// keepElems copies the elements of a complete array out of the stack.
func (p *parser) keepElems(es []*Value) []*Value {
	if len(es) > blockMembers/4 {
		return append([]*Value(nil), es...)
	}
	if cap(p.elemBlock)-len(p.elemBlock) < len(es) {
		p.elemBlock = make([]*Value, 0, blockMembers)
	}
	start := len(p.elemBlock)
	p.elemBlock = append(p.elemBlock, es...)
	return p.elemBlock[start:len(p.elemBlock):len(p.elemBlock)]
}

// valueBlock is how many values the parser allocates at a time.
const valueBlock = 256

// newValue returns a new value set to v, carved from the current block.
func (p *parser) newValue(v Value) *Value {
	if len(p.values) == cap(p.values) {
		p.values = make([]Value, 0, valueBlock)
	}
	p.values = append(p.values, v)
	return &p.values[len(p.values)-1]
}

func (p *parser) errAt(off int, msg string) error {
	line, col := position(p.src, &p.doc.lines, off)
	return &SyntaxError{Line: line, Column: col, Offset: off, Msg: msg}
}

// describe names the input at off for an error message.
func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.src[off:])
	switch {
	case r == utf8.RuneError:
		return fmt.Sprintf("byte 0x%02x", p.src[off])
	case r < 0x20:
		return fmt.Sprintf("control character %U", r)
	default:
		return fmt.Sprintf("character %q", r)
	}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Value, error) {
	if p.pos >= len(p.src) {
		return nil, p.errAt(p.pos, "unexpected end of input: a value is missing")
	}
	start := p.pos
	// Only arrays and objects nest: depth counts the ones around this
	// value, so MaxDepth of them may hold anything, as in encoding/json.
	if c := p.src[p.pos]; (c == '{' || c == '[') && depth >= MaxDepth {
		return nil, p.errAt(p.pos, fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.newValue(Value{Kind: String, Offset: start, Str: s}), nil
	case c == '-' || (c >= '0' && c <= '9'):
		lit, err := p.number()
		if err != nil {
			return nil, err
		}
		return p.newValue(Value{Kind: Number, Offset: start, Str: lit}), nil
	case c == 't':
		return p.literal("true", p.newValue(Value{Kind: Bool, Offset: start, Bool: true}))
	case c == 'f':
		return p.literal("false", p.newValue(Value{Kind: Bool, Offset: start}))
	case c == 'n':
		return p.literal("null", p.newValue(Value{Kind: Null, Offset: start}))
	default:
		return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected a value%s", p.describe(p.pos), p.bareWordHint()))
	}
}

// bareWordHint explains the usual reason for a bare word where a value
// belongs: a YAML habit (yes, True) or a string without quotes.
func (p *parser) bareWordHint() string {
	end := p.pos
	for end < len(p.src) && end-p.pos < 32 {
		c := p.src[end]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			break
		}
		end++
	}
	word := string(p.src[p.pos:end])
	switch word {
	case "":
		return ""
	case "yes", "Yes", "YES", "on", "On", "True", "TRUE", "y":
		return fmt.Sprintf(" (%s is not JSON: write true)", word)
	case "no", "No", "NO", "off", "Off", "False", "FALSE", "n":
		return fmt.Sprintf(" (%s is not JSON: write false)", word)
	case "None", "NULL", "Null", "nil", "~":
		return fmt.Sprintf(" (%s is not JSON: write null)", word)
	}
	return fmt.Sprintf(" (strings must be in double quotes: \"%s\")", word)
}

func (p *parser) literal(word string, v *Value) (*Value, error) {
	for i := 0; i < len(word); i++ {
		if p.pos+i >= len(p.src) || p.src[p.pos+i] != word[i] {
			return nil, p.errAt(p.pos+i, fmt.Sprintf("unexpected %s in literal %s", p.describe(p.pos+i), word))
		}
	}
	p.pos += len(word)
	return v, nil
}

// unclosed reports input that ends inside the object or list v, naming
// where v was opened: the end of the file is rarely where the mistake is.
func (p *parser) unclosed(v *Value) error {
	what, closer := "object", '}'
	if v.Kind == Array {
		what, closer = "list", ']'
	}
	line, col := p.doc.Position(v.Offset)
	return p.errAt(p.pos, fmt.Sprintf("unexpected end of input: the %s opened at line %d col %d is not closed with '%c'", what, line, col, closer))
}

func (p *parser) object(depth int) (*Value, error) {
	v := p.newValue(Value{Kind: Object, Offset: p.pos})
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	base := len(p.members)
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil, p.unclosed(v)
		}
		if p.src[p.pos] != '"' {
			if p.src[p.pos] == '}' {
				return nil, p.errAt(p.pos, "trailing comma before '}'")
			}
			return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected a quoted object key", p.describe(p.pos)))
		}
		keyOff := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected ':' after key %q", p.describe(p.pos), key))
		}
		p.pos++
		p.skipSpace()
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, Member{Key: key, KeyOffset: keyOff, Value: val})
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil, p.unclosed(v)
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			v.Members = p.keepMembers(p.members[base:])
			p.members = p.members[:base]
			return v, nil
		default:
			return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected ',' or '}' after object member %q", p.describe(p.pos), key))
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	v := p.newValue(Value{Kind: Array, Offset: p.pos})
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	base := len(p.elems)
	for {
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			return nil, p.errAt(p.pos, "trailing comma before ']'")
		}
		el, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, el)
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil, p.unclosed(v)
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			v.Elems = p.keepElems(p.elems[base:])
			p.elems = p.elems[:base]
			return v, nil
		default:
			return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected ',' or ']' after array element", p.describe(p.pos)))
		}
	}
}

// number scans a number literal (RFC 8259 §6) and returns it unconverted:
// the decoder decides whether it fits the field.
func (p *parser) number() (string, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.src[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if digits() == 0 {
		return "", p.errAt(p.pos, fmt.Sprintf("unexpected %s in number: expected a digit", p.describe(p.pos)))
	}
	if p.src[intStart] == '0' && p.pos-intStart > 1 {
		return "", p.errAt(intStart, "number has a leading zero")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return "", p.errAt(p.pos, fmt.Sprintf("unexpected %s after decimal point: expected a digit", p.describe(p.pos)))
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return "", p.errAt(p.pos, fmt.Sprintf("unexpected %s in exponent: expected a digit", p.describe(p.pos)))
		}
	}
	return p.text[start:p.pos], nil
}

// str scans a string literal and decodes its escapes. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does, so both read the same text.
func (p *parser) str() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	// Fast path: no escapes and valid UTF-8.
	i := p.pos + plainRun(p.src[p.pos:])
	for i < len(p.src) {
		c := p.src[i]
		if c == '"' {
			if utf8.Valid(p.src[p.pos:i]) {
				s := p.text[p.pos:i]
				p.pos = i + 1
				return s, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	buf := make([]byte, 0, i-p.pos+16)
	for {
		if p.pos >= len(p.src) {
			return "", p.errAt(start, "string is not closed with '\"'")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errAt(p.pos, fmt.Sprintf("%s in string: write it as an escape such as \\n", p.describe(p.pos)))
		case c == '\\':
			if err := p.escape(&buf); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			buf = utf8.AppendRune(buf, r) // RuneError for invalid bytes
			p.pos += size
		}
	}
}

// plainRun returns how many bytes at the start of b are none of '"', '\\'
// and the control characters, looking at eight at a time: the strings of a
// config are mostly long runs of such bytes (data URLs, unit files). It
// may stop early, within eight bytes of a byte it could not rule out; the
// caller's byte loop takes it from there.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// hasZero(x) is non-zero when a byte of x is zero; hasLess(x, 0x20)
	// when a byte is below 0x20. Neither misses one; a borrow can make
	// them flag a later byte as well, which only ends the run sooner.
	hasZero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	n := 0
	for n+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[n:])
		if hasZero(x^(ones*'"'))|hasZero(x^(ones*'\\'))|((x-ones*0x20)&^x&highs) != 0 {
			break
		}
		n += 8
	}
	return n
}

func (p *parser) escape(buf *[]byte) error {
	at := p.pos
	p.pos++ // backslash
	if p.pos >= len(p.src) {
		return p.errAt(at, "string is not closed with '\"'")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '"', '\\', '/':
		*buf = append(*buf, c)
	case 'b':
		*buf = append(*buf, '\b')
	case 'f':
		*buf = append(*buf, '\f')
	case 'n':
		*buf = append(*buf, '\n')
	case 'r':
		*buf = append(*buf, '\r')
	case 't':
		*buf = append(*buf, '\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return p.errAt(at, "invalid \\u escape: expected four hex digits")
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by an escaped low one is one
			// character; anything else is replaced, as encoding/json does.
			save := p.pos
			if p.pos+1 < len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
				p.pos += 2
				if r2, ok := p.hex4(); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						*buf = utf8.AppendRune(*buf, dec)
						return nil
					}
				}
			}
			p.pos = save
			r = utf8.RuneError
		}
		*buf = utf8.AppendRune(*buf, r)
	default:
		return p.errAt(at, fmt.Sprintf("invalid escape in string: backslash followed by %s", p.describe(at+1)))
	}
	return nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.src) {
		return 0, false
	}
	var r rune
	for _, c := range p.src[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}
