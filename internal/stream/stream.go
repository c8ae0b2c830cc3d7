// Package stream reads Fedora CoreOS stream metadata: the JSON document
// at BASE/STREAM.json that names, for each architecture, platform and
// format, the artifacts of the stream's current release with their
// signatures (coreos/stream-metadata-go's format, as coreos-installer
// reads it: src/source.rs, Stream, Arch, Platform, Artifact). It only
// reads and looks up; fetching the artifacts is the caller's.
//
// Family: installer and live images (internal/README.md).
package stream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
)

// DefaultBaseURL is where Fedora CoreOS publishes its streams
// (coreos-installer, src/source.rs, DEFAULT_STREAM_BASE_URL).
const DefaultBaseURL = "https://builds.coreos.fedoraproject.org/streams/"

// maxSize bounds the document: Fedora's are about 40 KB.
const maxSize = 16 << 20

// Stream is a stream's metadata, reduced to what is looked up in it.
type Stream struct {
	Architectures map[string]Arch `json:"architectures"`
}

// Arch is one architecture's artifacts, by platform.
type Arch struct {
	Artifacts map[string]Platform `json:"artifacts"`
}

// Platform is one platform's artifacts: by format, then by artifact type
// ("disk", "kernel", "initramfs", …).
type Platform struct {
	Formats map[string]map[string]Artifact `json:"formats"`
}

// Artifact is one file and its detached OpenPGP signature.
type Artifact struct {
	Location  string `json:"location"`
	Signature string `json:"signature"`
	SHA256    string `json:"sha256"`
}

// URL is the metadata's address: base (DefaultBaseURL when empty) with
// STREAM.json resolved against it, so a base without a trailing slash
// loses its last segment, as upstream's Url::join does.
func URL(name, base string) (*url.URL, error) {
	if base == "" {
		base = DefaultBaseURL
	}
	b, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("building stream URL: %w", err)
	}
	if !b.IsAbs() {
		return nil, fmt.Errorf("building stream URL: %q is not an absolute URL", base)
	}
	ref, err := url.Parse(url.PathEscape(name) + ".json")
	if err != nil {
		return nil, fmt.Errorf("building stream URL: %w", err)
	}
	return b.ResolveReference(ref), nil
}

// Decode reads a stream's metadata.
func Decode(r io.Reader) (*Stream, error) {
	var s Stream
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding stream metadata: %w", err)
	}
	return &s, nil
}

// Row is one architecture, platform and format the stream has.
type Row struct {
	Architecture, Platform, Format string
}

// Rows lists every architecture, platform and format, sorted.
func (s *Stream) Rows() []Row {
	var rows []Row
	for an, a := range s.Architectures {
		for pn, p := range a.Artifacts {
			for fn := range p.Formats {
				rows = append(rows, Row{an, pn, fn})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Architecture != b.Architecture {
			return a.Architecture < b.Architecture
		}
		if a.Platform != b.Platform {
			return a.Platform < b.Platform
		}
		return a.Format < b.Format
	})
	return rows
}

// Table is list-stream's output: a header and the rows, the first two
// columns padded to their widest value, two spaces between columns
// (src/source.rs, list_stream).
func Table(rows []Row) string {
	all := append([]Row{{"Architecture", "Platform", "Format"}}, rows...)
	w0, w1 := 0, 0
	for _, r := range all {
		w0, w1 = max(w0, len(r.Architecture)), max(w1, len(r.Platform))
	}
	var b strings.Builder
	for _, r := range all {
		fmt.Fprintf(&b, "%-*s  %-*s  %s\n", w0, r.Architecture, w1, r.Platform, r.Format)
	}
	return b.String()
}

// Artifacts are the artifacts of one architecture, platform and format,
// by type; an error names what the stream lacks, in upstream's words.
func (s *Stream) Artifacts(arch, platform, format string) (map[string]Artifact, error) {
	if a, ok := s.Architectures[arch]; ok {
		if p, ok := a.Artifacts[platform]; ok {
			if f, ok := p.Formats[format]; ok {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("couldn't find architecture %s, platform %s, format %s in stream metadata", arch, platform, format)
}
