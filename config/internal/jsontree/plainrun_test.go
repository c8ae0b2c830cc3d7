package jsontree

import (
	"math/rand/v2"
	"testing"
)

// TestPlainRun checks plainRun stops at the eight-byte word holding the
// first quote, backslash or control character, never past it, for random
// text rich in bytes near those values.
func TestPlainRun(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	alphabet := []byte{0x00, 0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 'a', 0x7f, 0x80, 0x9f, 0xa0, 0xa2, 0xdc, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(8) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = byte(0x20 + r.IntN(0x60))
				if special(b[i]) {
					b[i] = 'x'
				}
			}
		}
		first := len(b)
		for i, c := range b {
			if special(c) {
				first = i
				break
			}
		}
		if got, want := plainRun(string(b)), first/8*8; got != want {
			t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
		}
	}
}
