package resource

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"

	"github.com/vincent-petithory/dataurl"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/tftp"
)

// copyBufferSize is what one read moves from source to writer: the
// fetcher's memory use per fetch does not depend on the resource's size.
const copyBufferSize = 32 << 10

// errStopped ends a producer (the TFTP transfer) whose consumer gave up.
var errStopped = errors.New("fetch stopped")

// pipeline is what happens to a resource's bytes between the source and the
// caller's writer: decompression, then the hash check.
type pipeline struct {
	name     string // redacted URL, for errors
	gzip     bool
	hashName string // "sha512", "sha256"; "" for no check
	newHash  func() hash.Hash
	want     []byte
	// bufs, when set, lends the copy buffer (the Fetcher's pool).
	bufs *sync.Pool
}

func newPipeline(res config.Resource, name string) (pipeline, error) {
	p := pipeline{name: name}
	switch c := deref(res.Compression); c {
	case "":
	case "gzip":
		p.gzip = true
	default:
		return p, fmt.Errorf("%s: unsupported compression %q", name, c)
	}
	if h := deref(res.Verification.Hash); h != "" {
		parsed, err := config.ParseHash(h)
		switch {
		case errors.Is(err, config.ErrHashFunction):
			return p, fmt.Errorf("%s: unsupported hash function %q", name, parsed.Function)
		case err != nil:
			return p, fmt.Errorf("%s: malformed verification hash %q", name, h)
		}
		p.newHash, p.hashName, p.want = parsed.New, parsed.Function, parsed.Sum
	}
	return p, nil
}

// run copies src into s, decompressed and verified. Errors reading src are
// *readError, errors writing s are *writeError, so the retry loop can tell
// a lost connection from a full disk or a corrupt gzip stream.
func (p pipeline) run(src io.Reader, s *sink) error {
	r := io.Reader(&tagReader{r: src})
	if p.gzip {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return p.fail("decompressing", err)
		}
		defer zr.Close()
		r = zr
	}
	w := io.Writer(s)
	var h hash.Hash
	if p.newHash != nil {
		h = p.newHash()
		w = io.MultiWriter(h, s)
	}
	buf := p.buffer()
	_, err := io.CopyBuffer(w, r, *buf)
	if p.bufs != nil {
		p.bufs.Put(buf)
	}
	if err != nil {
		return p.fail("decompressing", err)
	}
	return p.check(h)
}

// buffer is a copy buffer of copyBufferSize, from the pool when there is
// one (its contents are overwritten before they are read: no clearing).
func (p pipeline) buffer() *[]byte {
	if p.bufs != nil {
		if b, ok := p.bufs.Get().(*[]byte); ok {
			return b
		}
	}
	b := make([]byte, copyBufferSize)
	return &b
}

// check compares the hash of what was written with the expected one (h is
// nil without verification).
func (p pipeline) check(h hash.Hash) error {
	if h == nil {
		return nil
	}
	if got := h.Sum(nil); !bytes.Equal(got, p.want) {
		return &HashMismatchError{
			URL:      p.name,
			Expected: p.hashName + "-" + hex.EncodeToString(p.want),
			Actual:   p.hashName + "-" + hex.EncodeToString(got),
		}
	}
	return nil
}

// write is run for contents already whole in memory and not compressed (a
// decoded data URL): one write, hashed on the way, with run's errors and
// its order (on a mismatch s has received all the data).
func (p pipeline) write(data []byte, s *sink) error {
	var h hash.Hash
	if p.newHash != nil {
		h = p.newHash()
		h.Write(data)
	}
	if len(data) > 0 {
		if _, err := s.Write(data); err != nil {
			return p.fail("writing", err)
		}
	}
	return p.check(h)
}

// fail names the step that went wrong, unless the source or the writer
// did, which say so themselves.
func (p pipeline) fail(step string, err error) error {
	var re *readError
	var we *writeError
	if errors.As(err, &re) || errors.As(err, &we) {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if p.gzip {
		return fmt.Errorf("%s: %s: %w", p.name, step, err)
	}
	return fmt.Errorf("%s: %w", p.name, err)
}

// tagReader marks the source's errors (but not io.EOF) as *readError.
type tagReader struct{ r io.Reader }

func (t *tagReader) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// readError is a failure reading the source: a lost connection, a
// truncated body, a TFTP error.
type readError struct{ err error }

func (e *readError) Error() string { return "reading: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// writeError is a failure of the caller's writer.
type writeError struct{ err error }

func (e *writeError) Error() string { return "writing: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// sink is the caller's writer, counting what it received.
type sink struct {
	w io.Writer
	n int64
	// reset, when set, discards what was written, so a fetch can start
	// over after any failure (FetchConfig, Get, a Rewinder).
	reset func() error
}

func (s *sink) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.n += int64(n)
	if err != nil {
		return n, &writeError{err}
	}
	return n, nil
}

// restart prepares s for another attempt; false means data already written
// cannot be taken back.
func (s *sink) restart() (bool, error) {
	if s.n == 0 {
		return true, nil
	}
	if s.reset == nil {
		return false, nil
	}
	if err := s.reset(); err != nil {
		return false, err
	}
	s.n = 0
	return true, nil
}

// Rewinder is a writer that can take back what it was written: Fetch
// starts a transfer broken midway over only into one (the files stage's
// temporary files are).
type Rewinder interface {
	io.Writer
	// Offset is where the next write goes.
	Offset() (int64, error)
	// Rewind discards everything from off on; the next write goes there.
	Rewind(off int64) error
}

// rewindSink is the sink of Fetch into w: one that can start over when w
// is a Rewinder.
func rewindSink(w io.Writer) *sink {
	s := &sink{w: w}
	if rw, ok := w.(Rewinder); ok {
		if off, err := rw.Offset(); err == nil {
			s.reset = func() error { return rw.Rewind(off) }
		}
	}
	return s
}

// bufferSink is the sink of a fetch into memory.
func bufferSink(b *limitedBuffer) *sink {
	return &sink{w: b, reset: func() error { b.Reset(); return nil }}
}

// limitedBuffer is a bytes.Buffer that refuses to grow past max.
type limitedBuffer struct {
	bytes.Buffer
	max int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if int64(b.Len())+int64(len(p)) > b.max {
		return 0, fmt.Errorf("%w: more than %s", ErrTooLarge, sizeString(b.max))
	}
	return b.Buffer.Write(p)
}

// sizeString writes a limit as its user gave it, most likely: in MiB or
// KiB when it is a whole number of them, else in bytes.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fetchData decodes a data URL (RFC 2397) and runs it through p. The
// common base64 form is decoded in one go; anything else goes to dataurl,
// which the config validation used too. Uncompressed contents are then
// hashed and written whole, without a copy loop.
func (f *Fetcher) fetchData(src string, p pipeline, s *sink) error {
	data, ok, err := plainBase64(src)
	if err != nil {
		return fmt.Errorf("%s: invalid data URL: %w", p.name, err)
	}
	if !ok {
		du, err := dataurl.DecodeString(src)
		if err != nil {
			return fmt.Errorf("%s: invalid data URL: %w", p.name, err)
		}
		data = du.Data
	}
	if p.gzip {
		return p.run(bytes.NewReader(data), s)
	}
	return p.write(data, s)
}

// plainBase64 decodes data:[<media type>];base64,<standard base64> with
// nothing but base64 characters after the comma, which dataurl would decode
// with base64.StdEncoding too. ok is false for any other form.
func plainBase64(src string) (data []byte, ok bool, err error) {
	head, enc, found := strings.Cut(src, ",")
	const suffix = ";base64"
	if !found || len(head) < len(suffix) || !strings.EqualFold(head[len(head)-len(suffix):], suffix) {
		return nil, false, nil
	}
	for i := 0; i < len(enc); i++ {
		b := enc[i]
		if !('A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '=') {
			return nil, false, nil
		}
	}
	data, err = base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, true, err
	}
	return data, true, nil
}

func tftpError(err error) *tftp.Error {
	var te *tftp.Error
	if errors.As(err, &te) {
		return te
	}
	return nil
}
