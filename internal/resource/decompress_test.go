package resource_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

func TestDecompress(t *testing.T) {
	raw := make([]byte, 3<<20)
	for i := range raw {
		raw[i] = byte(i * i / 7)
	}
	var gz, xzb, zst bytes.Buffer
	g := gzip.NewWriter(&gz)
	g.Write(raw)
	g.Close()
	x, _ := xz.NewWriter(&xzb)
	x.Write(raw)
	x.Close()
	z, _ := zstd.NewWriter(&zst)
	z.Write(raw)
	z.Close()
	// Two xz streams back to back decode as one image (xz -T makes such
	// files; so does cat).
	twoXZ := append(bytes.Clone(xzb.Bytes()), xzb.Bytes()...)

	// The system's xz in place of the Go decoder, as flint install
	// uses it.
	var external []resource.Format
	if path, err := exec.LookPath("xz"); err == nil {
		external = resource.Formats()
		for i := range external {
			if external[i].Name == "xz" {
				external[i].Decode = func(in io.Reader) (io.ReadCloser, error) {
					return sys.Runner{}.Filter(context.Background(), in, path, "-dc")
				}
			}
		}
	}
	tests := []struct {
		name, format string
		file         []byte
		want         []byte
		formats      []resource.Format
	}{
		{"raw", "raw", raw, raw, resource.Formats()},
		{"gzip", "gzip", gz.Bytes(), raw, resource.Formats()},
		{"xz", "xz", xzb.Bytes(), raw, resource.Formats()},
		{"xz twice", "xz", twoXZ, append(bytes.Clone(raw), raw...), resource.Formats()},
		{"zstd", "zstd", zst.Bytes(), raw, resource.Formats()},
		{"xz external", "xz", xzb.Bytes(), raw, external},
		{"xz twice external", "xz", twoXZ, append(bytes.Clone(raw), raw...), external},
		{"gzip unknown to an empty registry", "raw", gz.Bytes(), gz.Bytes(), nil},
	}
	for _, tt := range tests {
		if strings.HasSuffix(tt.name, "external") && tt.formats == nil {
			t.Logf("%s: no xz on PATH, skipped", tt.name)
			continue
		}
		r, format, closeDec, err := resource.Decompress(bytes.NewReader(tt.file), tt.formats)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := io.ReadAll(r)
		closeDec()
		if err != nil || format != tt.format || !bytes.Equal(got, tt.want) {
			t.Errorf("Decompress(%s) = format %s, %d bytes, %v; want %s, %d bytes", tt.name, format, len(got), err, tt.format, len(tt.want))
		}
		// Cut short (inside a stream: a cut between two xz streams
		// leaves a valid file), every compressed format fails instead of
		// ending.
		if tt.format == "raw" {
			continue
		}
		r, _, closeDec, err = resource.Decompress(bytes.NewReader(tt.file[:len(tt.file)/2+7]), tt.formats)
		if err == nil {
			_, err = io.ReadAll(r)
			closeDec()
		}
		if err == nil {
			t.Errorf("Decompress(%s cut in half): no error", tt.name)
		}
	}
}
