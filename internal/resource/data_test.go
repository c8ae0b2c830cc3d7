package resource_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

// writeRecorder records each Write, to tell the whole-in-memory path of
// data URLs (one write) from the copy loop.
type writeRecorder struct {
	bytes.Buffer
	writes int
	fail   error
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes++
	if w.fail != nil {
		return 0, w.fail
	}
	return w.Buffer.Write(p)
}

// TestDataURLFastPath covers the data URLs decoded whole and written in
// one go: each form still verified and decompressed, many fetches in a
// row sharing the pooled copy buffer without mixing their contents.
func TestDataURLFastPath(t *testing.T) {
	f, _ := newFetcher(t, resource.Options{Offline: true})
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // several copy buffers
	b64 := func(b []byte) string { return "data:;base64," + base64.StdEncoding.EncodeToString(b) }

	t.Run("base64 with the right hash, one write", func(t *testing.T) {
		var w writeRecorder
		if err := f.Fetch(ctx, withHash(res(b64(big)), sha512Of(big)), &w); err != nil || !bytes.Equal(w.Bytes(), big) {
			t.Fatalf("Fetch = %d bytes, %v; want %d bytes", w.Len(), err, len(big))
		}
		if w.writes != 1 {
			t.Errorf("Fetch made %d writes, want 1", w.writes)
		}
	})
	t.Run("base64 media type in upper case", func(t *testing.T) {
		var buf bytes.Buffer
		src := "data:text/plain;BASE64," + base64.StdEncoding.EncodeToString([]byte("hi"))
		if err := f.Fetch(ctx, res(src), &buf); err != nil || buf.String() != "hi" {
			t.Errorf("Fetch = %q, %v; want \"hi\"", buf.String(), err)
		}
	})
	t.Run("base64 hash mismatch", func(t *testing.T) {
		var buf bytes.Buffer
		err := f.Fetch(ctx, withHash(res(b64([]byte("secret text"))), sha256Of([]byte("other"))), &buf)
		var he *resource.HashMismatchError
		if !errors.As(err, &he) {
			t.Fatalf("Fetch = %v, want a HashMismatchError", err)
		}
		if he.URL != "data URL" || he.Expected != sha256Of([]byte("other")) || he.Actual != sha256Of([]byte("secret text")) {
			t.Errorf("mismatch = %+v", he)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error %q shows the contents", err)
		}
	})
	t.Run("gzip hash mismatch", func(t *testing.T) {
		err := f.Fetch(ctx, withGzip(withHash(res(b64(gzipped(big))), sha512Of([]byte("x")))), io.Discard)
		var he *resource.HashMismatchError
		if !errors.As(err, &he) || he.Actual != sha512Of(big) {
			t.Errorf("Fetch = %v, want a HashMismatchError on the decompressed contents", err)
		}
	})
	t.Run("gzip, many in a row", func(t *testing.T) {
		for i := range 20 {
			want := append(bytes.Repeat([]byte{byte('a' + i)}, 1000*i), big[:i]...)
			var buf bytes.Buffer
			if err := f.Fetch(ctx, withGzip(withHash(res(b64(gzipped(want))), sha256Of(want))), &buf); err != nil || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("fetch %d = %d bytes, %v; want %d bytes", i, buf.Len(), err, len(want))
			}
		}
	})
	t.Run("gzip corrupt", func(t *testing.T) {
		z := gzipped(big)
		z[len(z)-5] ^= 0xff // the length trailer
		if err := f.Fetch(ctx, withGzip(res(b64(z))), io.Discard); err == nil || !strings.Contains(err.Error(), "decompressing") {
			t.Errorf("Fetch of a corrupt gzip stream = %v, want a decompressing error", err)
		}
	})
	t.Run("percent-encoded with hash", func(t *testing.T) {
		want := []byte("a b,c/d\n")
		var buf bytes.Buffer
		if err := f.Fetch(ctx, withHash(res("data:,a%20b%2Cc%2Fd%0A"), sha256Of(want)), &buf); err != nil || !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("Fetch = %q, %v; want %q", buf.Bytes(), err, want)
		}
	})
	t.Run("percent-encoded hash mismatch", func(t *testing.T) {
		err := f.Fetch(ctx, withHash(res("data:,a%20b"), sha256Of([]byte("a+b"))), io.Discard)
		var he *resource.HashMismatchError
		if !errors.As(err, &he) || he.Actual != sha256Of([]byte("a b")) {
			t.Errorf("Fetch = %v, want a HashMismatchError on the decoded contents", err)
		}
	})
	t.Run("base64 invalid padding", func(t *testing.T) {
		if err := f.Fetch(ctx, res("data:;base64,aGk=aGk="), io.Discard); err == nil || !strings.Contains(err.Error(), "invalid data URL") {
			t.Errorf("Fetch = %v, want an invalid data URL error", err)
		}
	})
	t.Run("writer failure", func(t *testing.T) {
		w := writeRecorder{fail: errors.New("disk full")}
		err := f.Fetch(ctx, res(b64(big)), &w)
		if err == nil || !strings.Contains(err.Error(), "writing: disk full") {
			t.Errorf("Fetch = %v, want the writer's error", err)
		}
	})
	t.Run("empty base64", func(t *testing.T) {
		w := writeRecorder{}
		if err := f.Fetch(ctx, withHash(res("data:;base64,"), sha256Of(nil)), &w); err != nil || w.writes != 0 {
			t.Errorf("Fetch = %d writes, %v; want none, nil", w.writes, err)
		}
	})
}
