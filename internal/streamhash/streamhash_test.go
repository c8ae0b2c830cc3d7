package streamhash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func sum(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func TestCopy(t *testing.T) {
	a, b := "asdfasd\n", "qwer\n"
	for _, tc := range []struct {
		name, hashes, input, err string
	}{
		{"empty hash file", "", "", "hash file is empty"},
		{"no header", "aardvark\n", "", "couldn't parse hash file header"},
		{"blanks around the header", " stream-hash sha256 1234 \n", "", "couldn't parse hash file header"},
		{"unknown digest", "stream-hash sha255 1234\n", "", "unknown digest algorithm sha255"},
		{"zero chunk", "stream-hash sha256 0\n", "", "chunk size cannot be zero"},
		{"huge chunk", "stream-hash sha256 134217728\n", "", "chunk size 134217728 is greater than maximum 67108864"},
		{"bad hex", "stream-hash sha256 8\nasdf\n", "", `couldn't decode hash: "asdf"`},
		{"empty input", "stream-hash sha256 8\n", "", ""},
		{"extra hash", "stream-hash sha256 8\n" + sum(a) + "\n" + sum(a) + "\n", a, "premature end of input data at offset 8"},
		{"bad hash", "stream-hash sha256 8\n" + sum(a) + "\n" + sum("x") + "\n", a + b, "hash mismatch at offset 8; expected " + sum("x") + ", found " + sum(b)},
		{"extra data", "stream-hash sha256 8\n" + sum(a) + "\n", a + "qqq", "found extra input data at offset 8"},
		{"short last chunk", "stream-hash sha256 8\n" + sum(a) + "\n" + sum(b) + "\n", a + b, ""},
		{"full last chunk", "stream-hash sha256 8\n" + sum(a) + "\n" + sum("qwertyu\n") + "\n", a + "qwertyu\n", ""},
		{"no final newline", "stream-hash sha256 8\n" + sum("asd"), "asd", ""},
	} {
		var out bytes.Buffer
		err := Copy(&out, strings.NewReader(tc.input), strings.NewReader(tc.hashes))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: Copy = %v, want success", tc.name, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: Copy = %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && out.String() != tc.input:
			t.Errorf("%s: Copy wrote %q, want %q", tc.name, &out, tc.input)
		}
	}
}

// A chunk that fails its hash is never written, nor anything after it.
func TestCopyWritesOnlyChecked(t *testing.T) {
	var out bytes.Buffer
	hashes := "stream-hash sha256 4\n" + sum("good") + "\n" + sum("evil") + "\n" + sum("more") + "\n"
	if err := Copy(&out, strings.NewReader("goodbad!more"), strings.NewReader(hashes)); err == nil {
		t.Fatal("Copy of a tampered stream succeeded")
	}
	if out.String() != "good" {
		t.Errorf("Copy wrote %q, want only the checked chunk %q", &out, "good")
	}
}
