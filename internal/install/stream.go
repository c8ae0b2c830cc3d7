package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stream"
)

// hostArchitecture is this machine's architecture in the streams' names
// (coreos-installer's default for -a, the Rust target's arch).
func hostArchitecture() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	default:
		// s390x, ppc64le and riscv64 are spelt the same.
		return runtime.GOARCH
	}
}

// sectorSizer is a Target that tells a disk's logical sector size before
// it is opened for writing: the stream image is chosen by it.
type sectorSizer interface {
	SectorSize(dest string) (int64, error)
}

// streamFormat is the metal image format for a disk of ss-byte sectors:
// the 4Kn image for 4096, the 512-byte one otherwise, with a warning for a
// size that is neither (src/install.rs).
func streamFormat(ss int64, dest string, log *slog.Logger) string {
	switch ss {
	case 4096:
		return "4k.raw.xz"
	case 512:
		return "raw.xz"
	}
	log.Warn(fmt.Sprintf("Found non-standard sector size %d for %s, assuming 512b-compatible", ss, dest))
	return "raw.xz"
}

// resolveStream turns --stream into the image's URL and signature, from
// the stream's metadata: its one metal artifact for the architecture and
// the disk's sector size. The image is then fetched and verified as any
// --image-url is.
func resolveStream(ctx context.Context, o *Options, d Deps, f fetcher, log *slog.Logger) error {
	ss := int64(512)
	if t, ok := d.Target.(sectorSizer); ok {
		var err error
		if ss, err = t.SectorSize(o.Dest); err != nil {
			return err
		}
	}
	format := streamFormat(ss, o.Dest, log)
	u, err := stream.URL(o.Stream, o.StreamBaseURL)
	if err != nil {
		return err
	}
	if o.StreamBaseURL != "" {
		log.Info(fmt.Sprintf("Downloading %s metal image (%s) and signature referenced from %s", o.Architecture, format, u))
	} else {
		log.Info(fmt.Sprintf("Downloading Fedora CoreOS %s %s metal image (%s) and signature", o.Stream, o.Architecture, format))
	}
	s, err := f.stream(ctx, u)
	if err != nil {
		return err
	}
	arts, err := s.Artifacts(o.Architecture, "metal", format)
	if err != nil {
		return err
	}
	switch len(arts) {
	case 0:
		return fmt.Errorf("no artifacts found")
	case 1:
	default:
		return fmt.Errorf("found multiple artifacts")
	}
	for _, a := range arts {
		o.ImageURL = a.Location
		// The signature the metadata names (unless --image-sig names
		// one), left implicit when it is where the image's would be
		// anyway: a missing one is then waived by --insecure, as
		// upstream waives it.
		if o.ImageSig == "" && a.Signature != o.sigLocation() {
			o.ImageSig = a.Signature
		}
	}
	return nil
}

// stream fetches and reads the stream metadata at u, through the install's
// fetcher (its retries, proxy and timeouts).
func (f fetcher) stream(ctx context.Context, u *url.URL) (*stream.Stream, error) {
	raw, err := f.readSmall(ctx, u.String())
	if err != nil {
		// An HTTP status in reqwest's words, as coreos-installer's
		// http_get reports it (src/download.rs).
		status := 0
		var se *resource.StatusError
		switch {
		case errors.Is(err, resource.ErrNotFound):
			status = http.StatusNotFound
		case errors.As(err, &se):
			status = se.Status
		}
		if status >= 400 {
			kind := "client"
			if status >= 500 {
				kind = "server"
			}
			return nil, fmt.Errorf("fetching stream metadata: fetching '%s': HTTP status %s error (%d %s) for url (%s)", u, kind, status, http.StatusText(status), u)
		}
		return nil, fmt.Errorf("fetching stream metadata: fetching '%s': %w", u, err)
	}
	return stream.Decode(bytes.NewReader(raw))
}

// FetchStream fetches and reads the metadata of the stream name under
// baseURL (stream.DefaultBaseURL when empty), with install's fetcher:
// flint list-stream's source, as coreos-installer's list-stream reads it
// (src/source.rs).
func FetchStream(ctx context.Context, name, baseURL string, d Deps) (*stream.Stream, error) {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	u, err := stream.URL(name, baseURL)
	if err != nil {
		return nil, err
	}
	f, err := newFetcher(ctx, log, 0, d.Backoff, d.Proxy)
	if err != nil {
		return nil, err
	}
	return f.stream(ctx, u)
}
