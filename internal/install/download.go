package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stream"
	"github.com/flintboot/flint/internal/sys"
)

// DownloadOptions are `download`'s options (coreos-installer,
// src/cmdline/mod.rs, DownloadConfig): the artifacts of a stream's
// architecture, platform and format, or of ImageURL, into Directory.
type DownloadOptions struct {
	Stream, Architecture, Platform, Format string
	StreamBaseURL                          string
	ImageURL                               string
	Directory                              string
	// Decompress writes .gz and .xz artifacts decompressed (not .tar.gz
	// or .tar.xz), and no signature file.
	Decompress bool
	Insecure   bool
	// Keyring is the OpenPGP keys file (DefaultKeyring when empty).
	Keyring      string
	FetchRetries int
}

// artifact is one file to fetch and its signature's URL.
type artifact struct{ url, sig string }

// Download fetches every artifact with its detached signature, checks the
// signature with the keyring as flint install checks an image file
// (verifyFile), and keeps the file and its .sig in the directory; a file
// already there whose .sig is the served one and checks out is not
// fetched again (src/download.rs, download). report gets each file's path.
// A failed check removes what was written.
func Download(ctx context.Context, o DownloadOptions, d Deps, report func(string)) error {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := newFetcher(ctx, log, o.FetchRetries, d.Backoff, d.Proxy)
	if err != nil {
		return err
	}
	cmds := d.Commands
	if cmds == nil {
		cmds = sys.Runner{Logger: log}
	}
	var arts []artifact
	if o.ImageURL != "" {
		sig := sigURL(o.ImageURL)
		log.Info(fmt.Sprintf("Downloading image from %s", o.ImageURL))
		log.Info(fmt.Sprintf("Downloading signature from %s", sig))
		arts = []artifact{{o.ImageURL, sig}}
	} else {
		u, err := stream.URL(o.Stream, o.StreamBaseURL)
		if err != nil {
			return err
		}
		if o.StreamBaseURL != "" {
			log.Info(fmt.Sprintf("Downloading %s %s image (%s) and signature referenced from %s", o.Architecture, o.Platform, o.Format, u))
		} else {
			log.Info(fmt.Sprintf("Downloading Fedora CoreOS %s %s %s image (%s) and signature", o.Stream, o.Architecture, o.Platform, o.Format))
		}
		s, err := f.stream(ctx, u)
		if err != nil {
			return err
		}
		m, err := s.Artifacts(o.Architecture, o.Platform, o.Format)
		if err != nil {
			return err
		}
		types := make([]string, 0, len(m))
		for t := range m {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			arts = append(arts, artifact{m[t].Location, m[t].Signature})
		}
	}
	if len(arts) == 0 {
		return errors.New("no artifacts found")
	}
	keyringPath := o.Keyring
	if keyringPath == "" {
		keyringPath = DefaultKeyring
	}
	for _, a := range arts {
		p, err := downloadOne(ctx, f, cmds, a, o, keyringPath, log)
		if err != nil {
			return err
		}
		report(p)
	}
	return nil
}

// sigURL is an image URL's signature: ".sig" after its path.
func sigURL(image string) string {
	u, err := url.Parse(image)
	if err != nil {
		return image + ".sig"
	}
	u.Path += ".sig"
	u.RawPath = ""
	return u.String()
}

// decompressedName is the file name to write and whether to decompress
// it: only .gz and .xz, and never .tar.gz or .tar.xz (a GCP image is
// meant to stay a .tar.gz; src/download.rs, should_decompress).
func decompressedName(enabled bool, name string) (string, bool) {
	switch {
	case !enabled, strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tar.xz"):
		return name, false
	case strings.HasSuffix(name, ".gz"):
		return strings.TrimSuffix(name, ".gz"), true
	case strings.HasSuffix(name, ".xz"):
		return strings.TrimSuffix(name, ".xz"), true
	}
	return name, false
}

func downloadOne(ctx context.Context, f fetcher, cmds Commands, a artifact, o DownloadOptions, keyringPath string, log *slog.Logger) (string, error) {
	sig, err := f.readSmall(ctx, a.sig)
	if err != nil {
		log.Warn(fmt.Sprintf("Failed to fetch signature: %v", err))
		if !o.Insecure {
			return "", errors.New("--insecure not specified and signature not found")
		}
		log.Warn("Signature not found; skipping verification as requested")
		sig = nil
	}
	u, err := url.Parse(a.url)
	if err != nil {
		return "", fmt.Errorf("parsing artifact URL from stream metadata: %w", err)
	}
	name, decompress := decompressedName(o.Decompress, path.Base(u.Path))
	if name == "" || name == "/" || name == "." {
		return "", fmt.Errorf("artifact URL %s names no file", a.url)
	}
	dest := filepath.Join(o.Directory, name)
	sigPath := dest + ".sig"
	// A file kept from an earlier download, with the same signature, is
	// checked instead of fetched again (never a decompressed one: its
	// signature cannot be checked).
	if !decompress && sig != nil {
		if old, err := os.ReadFile(sigPath); err == nil && string(old) == string(sig) {
			if checkSignature(ctx, cmds, keyringPath, sig, dest) == nil {
				return dest, nil
			}
		}
	}
	fail := func(err error) (string, error) {
		os.Remove(dest)
		os.Remove(sigPath)
		return "", err
	}
	// The artifact as served goes to a scratch file first: its
	// signature covers those bytes.
	raw := dest
	if decompress {
		raw = dest + ".download"
		defer os.Remove(raw)
	}
	if err := fetchTo(ctx, f, a.url, raw); err != nil {
		return fail(err)
	}
	if sig != nil {
		if err := checkSignature(ctx, cmds, keyringPath, sig, raw); err != nil {
			return fail(err)
		}
	}
	if decompress {
		if err := decompressFile(raw, dest); err != nil {
			return fail(err)
		}
	}
	if sig != nil && !o.Decompress {
		if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
			return fail(fmt.Errorf("writing signature data: %w", err))
		}
	}
	return dest, nil
}

// checkSignature checks sig over the file at name with the keys of the
// keyring file, through gpg as flint install checks an image file.
func checkSignature(ctx context.Context, cmds Commands, keyringPath string, sig []byte, name string) error {
	home, err := newGPGHome(ctx, cmds, keyringPath, sig)
	if err != nil {
		return err
	}
	defer home.Close()
	return verifyFile(ctx, name, nil, home)
}

// fetchTo writes the body at rawURL to the file dest.
func fetchTo(ctx context.Context, f fetcher, rawURL, dest string) error {
	body, err := f.res.Open(ctx, resource.Request{URL: rawURL})
	if err != nil {
		return fmt.Errorf("fetching image URL: %w", err)
	}
	defer body.Close()
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dest, err)
	}
	if _, err := io.Copy(out, body); err != nil {
		out.Close()
		return fmt.Errorf("downloading %s: %w", rawURL, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}

// decompressFile writes the gzip or xz file src decompressed to dest.
func decompressFile(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	r, _, closeR, err := decompressor(in, nil)
	if err != nil {
		return err
	}
	defer closeR()
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dest, err)
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("decompressing %s: %w", src, err)
	}
	return out.Close()
}

// ParseRetries reads a --fetch-retries value: a count or "infinite".
func ParseRetries(s string) (int, error) {
	var n int
	if err := (retriesFlag{&n}).Set(s); err != nil {
		return 0, err
	}
	return n, nil
}

// HostArchitecture is this machine's architecture in the streams' names.
func HostArchitecture() string { return hostArchitecture() }
