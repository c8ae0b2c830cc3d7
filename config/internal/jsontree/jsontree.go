// Package jsontree checks JSON (RFC 8259) and reads it value by value,
// telling where every key and value starts, keeping object members in order
// (duplicates included), and reporting syntax errors with their real line
// and column.
//
// encoding/json gives only a byte offset for syntax errors and none at all for
// values, and folds duplicate keys silently; a config validator needs all
// three. It builds no tree: a tree of a config's values costs several times
// the config, and a reader that reads each value once, into the model,
// costs nothing but the model.
package jsontree

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
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

// MaxDepth bounds nesting. encoding/json allows 10,000 levels; no config
// needs more than ten (the deepest the spec goes is a certificate
// authority's HTTP header: ignition.security.tls.certificateAuthorities[]
// .httpHeaders[], seven levels), and the decoder's recursion follows the
// model's own, so a hundred leaves ten times what any config could use
// inside a key the spec does not have.
const MaxDepth = 100

// Doc is a document whose syntax Parse checked. Its values are read in
// order with a Reader: nothing of the document is held but its text, so
// reading a document costs what the reader keeps of it, not a tree of
// every value (a tree of small values costs tens of bytes for every two
// bytes of input: "[]" is a value).
type Doc struct {
	// text is the document's bytes, not a copy: the strings a Reader
	// returns are cut from it, no allocation per string. They keep all of
	// it alive as long as any of them is.
	text  string
	lines []int // byte offsets at which lines start, computed on first use
	// top holds the offsets of the top-level object's keys, and counts
	// the number of elements of each array of at least countedArray, by
	// the offset of its '[': what Parse saw, so that reading the document
	// does not take another pass over it to find them (the top-level
	// members, to find the version first; a list's length, to allocate it
	// once).
	top    []int
	counts map[int]int
}

// countedArray is the fewest elements an array has for Parse to record
// its count: enough that recording costs a fraction of the array's text.
const countedArray = 64

// SyntaxError is a JSON syntax error at a line and column (both from 1).
type SyntaxError struct {
	Line, Column int
	Offset       int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d col %d: %s", e.Line, e.Column, e.Msg)
}

// Parse checks that src is one JSON document (anything but whitespace after
// it is an error) nested at most MaxDepth deep, and returns it for reading.
// The document and every string read from it share src's memory: src must
// not change afterwards. A copy would double what a config of tens of
// megabytes costs while it is read.
func Parse(src []byte) (*Doc, error) {
	d := &Doc{text: unsafe.String(unsafe.SliceData(src), len(src))}
	p := checker{text: d.text, doc: d}
	if strings.HasPrefix(d.text, "\xEF\xBB\xBF") {
		return nil, p.errAt(0, "file starts with a UTF-8 byte order mark; save it without one")
	}
	p.skipSpace()
	if p.pos >= len(p.text) {
		if len(p.text) == 0 {
			return nil, p.errAt(0, "empty input: not a config")
		}
		return nil, p.errAt(p.pos, "no JSON value, only whitespace")
	}
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.text) {
		return nil, p.errAt(p.pos, fmt.Sprintf("unexpected %s after the end of the top-level value", p.describe(p.pos)))
	}
	return d, nil
}

// Position turns a byte offset into a line and a column, both counted from 1;
// the column counts characters, not bytes, as an editor does.
func (d *Doc) Position(offset int) (line, col int) {
	if d.lines == nil {
		ls := []int{0}
		for i := 0; i < len(d.text); i++ {
			if d.text[i] == '\n' {
				ls = append(ls, i+1)
			}
		}
		d.lines = ls
	}
	offset = min(offset, len(d.text))
	ls := d.lines
	i := sort.Search(len(ls), func(i int) bool { return ls[i] > offset }) - 1
	return i + 1, utf8.RuneCountInString(d.text[ls[i]:offset]) + 1
}

// checker checks a document's syntax, allocating nothing unless it finds
// an error.
type checker struct {
	text string
	pos  int
	doc  *Doc
}

func (p *checker) errAt(off int, msg string) error {
	line, col := p.doc.Position(off)
	return &SyntaxError{Line: line, Column: col, Offset: off, Msg: msg}
}

// describe names the input at off for an error message.
func (p *checker) describe(off int) string {
	if off >= len(p.text) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.text[off:])
	switch {
	case r == utf8.RuneError:
		return fmt.Sprintf("byte 0x%02x", p.text[off])
	case r < 0x20:
		return fmt.Sprintf("control character %U", r)
	default:
		return fmt.Sprintf("character %q", r)
	}
}

func (p *checker) skipSpace() {
	p.pos = skipSpace(p.text, p.pos)
}

// skipSpace returns the offset of the first byte at or after pos that is
// not JSON whitespace (RFC 8259 §2). It is called from two dozen places:
// inlined, its loop would add kilobytes to a binary that has a budget
// (cmd/flint's conventions test).
//
//go:noinline
func skipSpace(text string, pos int) int {
	for pos < len(text) {
		switch text[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

func (p *checker) value(depth int) error {
	if p.pos >= len(p.text) {
		return p.errAt(p.pos, "unexpected end of input: a value is missing")
	}
	// Only arrays and objects nest: depth counts the ones around this
	// value, so MaxDepth of them may hold anything, as in encoding/json.
	if c := p.text[p.pos]; (c == '{' || c == '[') && depth >= MaxDepth {
		return p.errAt(p.pos, fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		_, err := p.str()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	default:
		return p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected a value%s", p.describe(p.pos), p.bareWordHint()))
	}
}

// bareWordHint explains the usual reason for a bare word where a value
// belongs: a YAML habit (yes, True) or a string without quotes.
func (p *checker) bareWordHint() string {
	end := p.pos
	for end < len(p.text) && end-p.pos < 32 {
		c := p.text[end]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			break
		}
		end++
	}
	word := p.text[p.pos:end]
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

func (p *checker) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if p.pos+i >= len(p.text) || p.text[p.pos+i] != word[i] {
			return p.errAt(p.pos+i, fmt.Sprintf("unexpected %s in literal %s", p.describe(p.pos+i), word))
		}
	}
	p.pos += len(word)
	return nil
}

// unclosed reports input that ends inside the object or list opened at
// open, naming where: the end of the file is rarely where the mistake is.
func (p *checker) unclosed(open int) error {
	what, closer := "object", '}'
	if p.text[open] == '[' {
		what, closer = "list", ']'
	}
	line, col := p.doc.Position(open)
	return p.errAt(p.pos, fmt.Sprintf("unexpected end of input: the %s opened at line %d col %d is not closed with '%c'", what, line, col, closer))
}

func (p *checker) object(depth int) error {
	open := p.pos
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.text) {
			return p.unclosed(open)
		}
		if p.text[p.pos] != '"' {
			if p.text[p.pos] == '}' {
				return p.errAt(p.pos, "trailing comma before '}'")
			}
			return p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected a quoted object key", p.describe(p.pos)))
		}
		keyStart := p.pos
		if depth == 0 {
			p.doc.top = append(p.doc.top, keyStart)
		}
		if _, err := p.str(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != ':' {
			return p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected ':' after key %q", p.describe(p.pos), p.key(keyStart)))
		}
		p.pos++
		p.skipSpace()
		if err := p.value(depth + 1); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.text) {
			return p.unclosed(open)
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected ',' or '}' after object member %q", p.describe(p.pos), p.key(keyStart)))
		}
	}
}

// key decodes the key at off, checked already, for a message.
func (p *checker) key(off int) string {
	return (&Reader{text: p.text, pos: off}).Str()
}

func (p *checker) array(depth int) error {
	open, n := p.pos, 0
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if p.pos < len(p.text) && p.text[p.pos] == ']' {
			return p.errAt(p.pos, "trailing comma before ']'")
		}
		if err := p.value(depth + 1); err != nil {
			return err
		}
		n++
		p.skipSpace()
		if p.pos >= len(p.text) {
			return p.unclosed(open)
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			if n >= countedArray {
				if p.doc.counts == nil {
					p.doc.counts = map[int]int{}
				}
				p.doc.counts[open] = n
			}
			return nil
		default:
			return p.errAt(p.pos, fmt.Sprintf("unexpected %s: expected ',' or ']' after array element", p.describe(p.pos)))
		}
	}
}

// number checks a number literal (RFC 8259 §6).
func (p *checker) number() error {
	digits := func() int {
		n := 0
		for p.pos < len(p.text) && p.text[p.pos] >= '0' && p.text[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.text[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if digits() == 0 {
		return p.errAt(p.pos, fmt.Sprintf("unexpected %s in number: expected a digit", p.describe(p.pos)))
	}
	if p.text[intStart] == '0' && p.pos-intStart > 1 {
		return p.errAt(intStart, "number has a leading zero")
	}
	if p.pos < len(p.text) && p.text[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.errAt(p.pos, fmt.Sprintf("unexpected %s after decimal point: expected a digit", p.describe(p.pos)))
		}
	}
	if p.pos < len(p.text) && (p.text[p.pos] == 'e' || p.text[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.text) && (p.text[p.pos] == '+' || p.text[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.errAt(p.pos, fmt.Sprintf("unexpected %s in exponent: expected a digit", p.describe(p.pos)))
		}
	}
	return nil
}

// str checks a string literal: closed, no control characters, valid
// escapes. Invalid UTF-8 is no error: the Reader reads it as U+FFFD, as
// encoding/json does. It reports whether the string has escapes.
func (p *checker) str() (escaped bool, err error) {
	start := p.pos
	p.pos++ // opening quote
	for {
		p.pos += plainRun(p.text[p.pos:])
		if p.pos >= len(p.text) {
			return false, p.errAt(start, "string is not closed with '\"'")
		}
		switch c := p.text[p.pos]; {
		case c == '"':
			p.pos++
			return escaped, nil
		case c < 0x20:
			return false, p.errAt(p.pos, fmt.Sprintf("%s in string: write it as an escape such as \\n", p.describe(p.pos)))
		case c == '\\':
			escaped = true
			if err := p.escape(); err != nil {
				return false, err
			}
		default:
			p.pos++
		}
	}
}

// escape checks one backslash escape.
func (p *checker) escape() error {
	at := p.pos
	end, ok := unescape(p.text, at, nil)
	switch {
	case ok:
		p.pos = end
		return nil
	case at+1 >= len(p.text):
		return p.errAt(at, "string is not closed with '\"'")
	case p.text[at+1] == 'u':
		return p.errAt(at, "invalid \\u escape: expected four hex digits")
	}
	return p.errAt(at, fmt.Sprintf("invalid escape in string: backslash followed by %s", p.describe(at+1)))
}

// The escapes of one character (RFC 8259 §7), and what each stands for.
const (
	escapeChars  = `"\/bfnrt`
	escapeValues = "\"\\/\b\f\n\r\t"
)

// unescape reads the backslash escape at pos and returns the offset after
// it, and whether it is one. When buf is not nil, it appends what the
// escape stands for: a lone or mismatched \u surrogate becomes U+FFFD, as
// in encoding/json, and a high surrogate escaped before a low one is one
// character.
func unescape(text string, pos int, buf *[]byte) (int, bool) {
	if pos+1 >= len(text) {
		return pos, false
	}
	if i := strings.IndexByte(escapeChars, text[pos+1]); i >= 0 {
		if buf != nil {
			*buf = append(*buf, escapeValues[i])
		}
		return pos + 2, true
	}
	r, ok := hex4(text, pos+2)
	if text[pos+1] != 'u' || !ok {
		return pos, false
	}
	pos += 6
	if buf == nil {
		return pos, true
	}
	if utf16.IsSurrogate(r) {
		r2, ok := hex4(text, pos+2)
		if dec := utf16.DecodeRune(r, r2); ok && strings.HasPrefix(text[pos:], `\u`) && dec != utf8.RuneError {
			*buf = utf8.AppendRune(*buf, dec)
			return pos + 6, true
		}
		r = utf8.RuneError
	}
	*buf = utf8.AppendRune(*buf, r)
	return pos, true
}

// plainRun returns how many bytes at the start of s are none of '"', '\\'
// and the control characters, looking at eight at a time: the strings of a
// config are mostly long runs of such bytes (data URLs, unit files). It
// may stop early, within eight bytes of a byte it could not rule out; the
// caller's byte loop takes it from there.
func plainRun(s string) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// hasZero(x) is non-zero when a byte of x is zero; hasLess(x, 0x20)
	// when a byte is below 0x20. Neither misses one; a borrow can make
	// them flag a later byte as well, which only ends the run sooner.
	hasZero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	// Read as bytes, eight at a time: the compiler does not combine eight
	// loads from a string into one. Only read: s stays unchanged.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
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

// hex4 reads the four hex digits of a \u escape at pos.
func hex4(text string, pos int) (rune, bool) {
	if pos+4 > len(text) {
		return 0, false
	}
	var r rune
	for i := pos; i < pos+4; i++ {
		c := text[i]
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
	return r, true
}

// Reader reads a document's values in order, each exactly once: the
// caller Peeks at a value's kind and offset, then reads it (Str, Literal,
// Bool, or Begin and More for an array or object) or skips it. It trusts
// the document's syntax, which Parse checked.
type Reader struct {
	text   string
	pos    int
	counts map[int]int // the Doc's
}

// Reader returns a reader at the document's top-level value.
func (d *Doc) Reader() *Reader {
	return &Reader{text: d.text, counts: d.counts}
}

// At returns a reader at offset, which must be where a value starts: what
// an earlier Reader's Offset gave.
func (d *Doc) At(offset int) *Reader {
	return &Reader{text: d.text, pos: offset, counts: d.counts}
}

// TopKeys returns the offsets of the top-level object's keys, in order (none
// when the document is not an object): readers At them read each key, then
// its value.
func (d *Doc) TopKeys() []int {
	return d.top
}

// Offset is the byte offset of the next value.
func (r *Reader) Offset() int {
	r.pos = skipSpace(r.text, r.pos)
	return r.pos
}

// Peek returns the kind and the offset of the next value. Not inlined, as
// skipSpace.
//
//go:noinline
func (r *Reader) Peek() (Kind, int) {
	off := r.Offset()
	switch r.text[off] {
	case '{':
		return Object, off
	case '[':
		return Array, off
	case '"':
		return String, off
	case 't', 'f':
		return Bool, off
	case 'n':
		return Null, off
	}
	return Number, off
}

// Str reads a string and returns its decoded text: a piece of the
// document's text when the string has no escapes and is valid UTF-8.
// Invalid UTF-8 becomes U+FFFD, as encoding/json does, so both read the
// same text.
func (r *Reader) Str() string {
	start := r.Offset() + 1
	i := start
	for {
		i += plainRun(r.text[i:])
		c := r.text[i]
		if c == '"' {
			if s := r.text[start:i]; utf8.ValidString(s) {
				r.pos = i + 1
				return s
			}
			break
		}
		if c == '\\' {
			break
		}
		i++
	}
	buf := make([]byte, 0, i-start+16)
	buf = append(buf, r.text[start:i]...)
	r.pos = i
	for {
		c := r.text[r.pos]
		switch {
		case c == '"':
			r.pos++
			return string([]rune(string(buf))) // invalid bytes become U+FFFD
		case c == '\\':
			r.pos, _ = unescape(r.text, r.pos, &buf)
		default:
			buf = append(buf, c)
			r.pos++
		}
	}
}

// Literal reads a number and returns its literal, unconverted: the caller
// decides whether it fits.
func (r *Reader) Literal() string {
	start := r.Offset()
	r.skipScalar()
	return r.text[start:r.pos]
}

// Bool reads true or false.
func (r *Reader) Bool() bool {
	b := r.text[r.Offset()] == 't'
	r.skipScalar()
	return b
}

// skipScalar skips a number, true, false or null. Not inlined, as
// skipSpace.
//
//go:noinline
func (r *Reader) skipScalar() {
	for r.pos < len(r.text) {
		switch r.text[r.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return
		}
		r.pos++
	}
}

// Skip reads any value and discards it.
func (r *Reader) Skip() {
	switch r.text[r.Offset()] {
	case '"':
		r.pos = stringEnd(r.text, r.pos)
	case '{', '[':
		depth := 0
		for {
			switch r.text[r.pos] {
			case '"':
				r.pos = stringEnd(r.text, r.pos)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					r.pos++
					return
				}
			}
			r.pos++
		}
	default:
		r.skipScalar()
	}
}

// stringEnd returns the offset just past the string that opens at pos.
func stringEnd(text string, pos int) int {
	pos++
	for {
		pos += plainRun(text[pos:])
		switch text[pos] {
		case '"':
			return pos + 1
		case '\\':
			pos += 2
		default:
			pos++
		}
	}
}

// Count returns how many elements the next value, an array, has, without
// reading it.
func (r *Reader) Count() int {
	if n, ok := r.counts[r.Offset()]; ok {
		return n
	}
	c := *r
	n := 0
	for c.Begin(); c.More(); c.Skip() {
		n++
	}
	return n
}

// Begin reads the opening bracket of the array or object at the reader.
// Then, while More reports another element or member, the caller reads it
// (for an object, Key and then the value) or skips it: every one, since
// the reader only moves forward.
func (r *Reader) Begin() {
	r.pos = r.Offset() + 1
}

// More reports whether the array or object being read has another element
// or member, reading the comma before it, or else the closing bracket. Not
// inlined, as skipSpace.
//
//go:noinline
func (r *Reader) More() bool {
	switch r.text[r.Offset()] {
	case ',':
		r.pos++
		return true
	case ']', '}':
		r.pos++
		return false
	}
	return true // the first
}

// Key reads an object member's key and the colon after it, and returns the
// key and its offset.
func (r *Reader) Key() (string, int) {
	off := r.Offset()
	key := r.Str()
	r.pos = skipSpace(r.text, r.pos) + 1 // ':'
	return key, off
}
