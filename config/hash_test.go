package config

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseHash(t *testing.T) {
	sha512Empty := "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
	tests := []struct {
		in     string
		want   error // nil: parses
		fn     string
		digits int
	}{
		{"sha512-" + sha512Empty, nil, "sha512", 128},
		{"sha256-" + strings.Repeat("aB", 32), nil, "sha256", 64},
		{"", ErrHashForm, "", 0},
		{"sha512", ErrHashForm, "", 0},
		{"md5", ErrHashForm, "", 0},
		{"-bar", ErrHashFunction, "", 0},
		{"foo-bar", ErrHashFunction, "foo", 0},
		{"SHA512-" + sha512Empty, ErrHashFunction, "SHA512", 0},
		{"sha512-", ErrHashLength, "sha512", 128},
		{"sha512-00", ErrHashLength, "sha512", 128},
		{"sha256-" + strings.Repeat("0", 63), ErrHashLength, "sha256", 64},
		{"sha256-" + strings.Repeat("z", 64), ErrHashNotHex, "sha256", 64},
		{"sha256-" + strings.Repeat("0", 62) + "0x", ErrHashNotHex, "sha256", 64},
	}
	for _, tt := range tests {
		h, err := ParseHash(tt.in)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("ParseHash(%q) = %v, want %v", tt.in, err, tt.want)
		}
		if h.Function != tt.fn || h.Digits() != tt.digits {
			t.Errorf("ParseHash(%q) = function %q (%d digits), want %q (%d)", tt.in, h.Function, h.Digits(), tt.fn, tt.digits)
		}
		if err == nil && h.String() != tt.in && h.String() != strings.ToLower(tt.in) {
			t.Errorf("ParseHash(%q).String() = %q", tt.in, h.String())
		}
	}
	h, _ := ParseHash("sha512-" + sha512Empty)
	if got := hex.EncodeToString(h.New().Sum(nil)); got != sha512Empty {
		t.Errorf("ParseHash(sha512-…).New() of nothing = %s, want %s", got, sha512Empty)
	}
}

// TestParseHashDigits checks that a digest of the right length parses
// exactly when hex.DecodeString takes it, whatever its bytes.
func TestParseHashDigits(t *testing.T) {
	cases := []string{"0123456789abcdef", "ABCDEF", "aF", "0g", "g0", "zz", " 0", "0x", "é", "\x00a"}
	for b := range 256 {
		cases = append(cases, "a"+string([]byte{byte(b)}))
	}
	for _, c := range cases {
		d := strings.Repeat("0", 64-len(c)) + c
		_, decErr := hex.DecodeString(d)
		_, err := ParseHash("sha256-" + d)
		if len(d) != 64 {
			continue
		}
		if (err == nil) != (decErr == nil) || (err != nil && !errors.Is(err, ErrHashNotHex)) {
			t.Errorf("ParseHash(sha256-%q) = %v, hex.DecodeString says %v", d, err, decErr)
		}
	}
}
