package resource

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Decoder decodes one compressed stream; the result's Close releases the
// decoder.
type Decoder func(r io.Reader) (io.ReadCloser, error)

// Format is a compressed format, told by the magic number its data starts
// with.
type Format struct {
	Name   string
	Magic  []byte
	Decode Decoder
}

// zstdMaxWindow bounds the window a zstd frame may ask for, and with it
// the memory; zstd's --long=27 (128 MiB) is within it.
const zstdMaxWindow = 128 << 20

// Formats returns the formats Decompress knows, by their magic numbers:
// gzip (RFC 1952, 2.3.1), xz (the .xz file format 1.2.1, 2.1.1.1; every
// stream of a multi-stream file, as xz -T and cat make them) and zstd
// (RFC 8878, 3.1.1; windows up to 128 MiB). Each call returns a new
// slice: a caller may replace a format's Decode in its own (flint install
// hands xz to the system's xz, which decodes twice as fast).
func Formats() []Format {
	return []Format{
		{Name: "gzip", Magic: []byte{0x1f, 0x8b}, Decode: func(r io.Reader) (io.ReadCloser, error) {
			return gzip.NewReader(r)
		}},
		{Name: "xz", Magic: []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, Decode: func(r io.Reader) (io.ReadCloser, error) {
			z, err := xz.ReaderConfig{SingleStream: false}.NewReader(r)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(z), nil
		}},
		{Name: "zstd", Magic: []byte{0x28, 0xb5, 0x2f, 0xfd}, Decode: func(r io.Reader) (io.ReadCloser, error) {
			z, err := zstd.NewReader(r, zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			return z.IOReadCloser(), nil
		}},
	}
}

// Decompress returns r's contents decoded by the one of formats whose magic
// number they start with: the format is told by the content (a server's
// Content-Type or a file's name may lie), as coreos-installer does
// (src/io/compress.rs). Contents of no format are returned as they are,
// as "raw". close releases the decoder.
func Decompress(r io.Reader, formats []Format) (out io.Reader, format string, close func(), err error) {
	longest := 0
	for _, f := range formats {
		longest = max(longest, len(f.Magic))
	}
	br := bufio.NewReaderSize(r, 256<<10)
	head, err := br.Peek(longest)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", nil, fmt.Errorf("reading: %w", err)
	}
	for _, f := range formats {
		if !bytes.HasPrefix(head, f.Magic) {
			continue
		}
		z, err := f.Decode(br)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		return z, f.Name, func() { z.Close() }, nil
	}
	return br, "raw", func() {}, nil
}
