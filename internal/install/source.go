package install

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// maxSmallFile bounds what is read whole into memory: a config, a
// signature, a keyring.
const maxSmallFile = 16 << 20

// fetcher gets images, signatures and configs over http(s) with
// --fetch-retries, or from local files.
type fetcher struct {
	client  *http.Client
	retries int // Infinite, or how many times to try again
	backoff time.Duration
	log     *slog.Logger
}

// retryable says whether a failed request is worth another try: network
// errors and 5xx answers are, anything else the server said is not.
type statusError struct {
	url    string
	status string
	code   int
}

func (e *statusError) Error() string { return fmt.Sprintf("%s: %s", e.url, e.status) }

// get opens url, trying again after a network error or a 5xx answer
// until the retries are spent (coreos-installer, src/download.rs,
// http_get: a sleep that doubles from 1 s, capped).
func (f fetcher) get(ctx context.Context, rawURL string) (*http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("URL %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %s: unsupported scheme %q (http or https)", redact(u), u.Scheme)
	}
	delay := f.backoff
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("URL %s: %w", redact(u), err)
		}
		resp, err := f.client.Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
			err = &statusError{url: redact(u), status: resp.Status, code: resp.StatusCode}
		} else {
			err = fmt.Errorf("fetching %s: %w", redact(u), errors.Unwrap(err))
		}
		var se *statusError
		if errors.As(err, &se) && se.code < 500 {
			return nil, err
		}
		if ctx.Err() != nil || (f.retries != Infinite && attempt >= f.retries) {
			return nil, err
		}
		f.log.Warn("fetch failed, retrying", "url", redact(u), "in", delay, "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// redact drops credentials and the query from a URL for messages.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// isURL says whether a location is an http(s) URL rather than a path.
func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// readSmall reads a small file or URL whole.
func (f fetcher) readSmall(ctx context.Context, loc string) ([]byte, error) {
	var r io.ReadCloser
	if isURL(loc) {
		resp, err := f.get(ctx, loc)
		if err != nil {
			return nil, err
		}
		r = resp.Body
	} else {
		file, err := os.Open(loc)
		if err != nil {
			return nil, err
		}
		r = file
	}
	defer r.Close()
	raw, err := io.ReadAll(io.LimitReader(r, maxSmallFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc, err)
	}
	if len(raw) > maxSmallFile {
		return nil, fmt.Errorf("%s: larger than %d MiB", loc, maxSmallFile>>20)
	}
	return raw, nil
}

// openImage opens the image file or URL. size is its length in bytes, or
// -1 when the server does not say.
func (f fetcher) openImage(ctx context.Context, o Options) (io.ReadCloser, int64, error) {
	if o.ImageFile != "" {
		file, err := os.Open(o.ImageFile)
		if err != nil {
			return nil, 0, fmt.Errorf("image: %w", err)
		}
		fi, err := file.Stat()
		if err != nil {
			file.Close()
			return nil, 0, fmt.Errorf("image: %w", err)
		}
		return file, fi.Size(), nil
	}
	resp, err := f.get(ctx, o.ImageURL)
	if err != nil {
		return nil, 0, fmt.Errorf("image: %w", err)
	}
	return resp.Body, resp.ContentLength, nil
}

// Magic numbers of the compressed formats flint reads: gzip (RFC 1952,
// 2.3.1), xz (the .xz file format 1.2.1, 2.1.1.1) and zstd (RFC 8878,
// 3.1.1).
var (
	magicGzip = []byte{0x1f, 0x8b}
	magicXZ   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// zstdMaxWindow bounds the window a zstd frame may ask for, and with it
// the memory; zstd's --long=27 (128 MiB) is within it.
const zstdMaxWindow = 128 << 20

// Decoder runs an external decompressor over a stream (sys.Runner.Filter
// with its command bound).
type Decoder func(in io.Reader) (io.ReadCloser, error)

// decompressor returns the raw image from its file: the format is told
// by the content (a server's Content-Type or a file's name may lie), as
// coreos-installer does (src/io/compress.rs). xzFilter, when not nil,
// decodes xz instead of the Go decoder. close releases the decoder.
func decompressor(r io.Reader, xzFilter Decoder) (image io.Reader, format string, close func(), err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	head, err := br.Peek(6)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", nil, fmt.Errorf("reading the image: %w", err)
	}
	switch {
	case bytes.HasPrefix(head, magicGzip):
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, "", nil, fmt.Errorf("gzip image: %w", err)
		}
		return z, "gzip", func() { z.Close() }, nil
	case bytes.HasPrefix(head, magicXZ) && xzFilter != nil:
		z, err := xzFilter(br)
		if err != nil {
			return nil, "", nil, fmt.Errorf("xz image: %w", err)
		}
		return z, "xz", func() { z.Close() }, nil
	case bytes.HasPrefix(head, magicXZ):
		cfg := xz.ReaderConfig{SingleStream: false}
		z, err := cfg.NewReader(br)
		if err != nil {
			return nil, "", nil, fmt.Errorf("xz image: %w", err)
		}
		return z, "xz", func() {}, nil
	case bytes.HasPrefix(head, magicZstd):
		z, err := zstd.NewReader(br, zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, "", nil, fmt.Errorf("zstd image: %w", err)
		}
		return z, "zstd", z.Close, nil
	default:
		return br, "raw", func() {}, nil
	}
}
