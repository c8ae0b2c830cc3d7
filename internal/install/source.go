package install

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// maxSmallFile bounds what is read whole into memory: a config, a
// signature, a keyring.
const maxSmallFile = 16 << 20

// Backoffs of a retried download: a sleep that doubles from 1 s, capped
// at 10 s (coreos-installer, src/download.rs, http_get).
const (
	defaultBackoff = time.Second
	maxBackoff     = 10 * time.Second
)

// fetcher gets images, signatures and configs over http(s) through the
// resource fetcher (its retries by error class, bounded by
// --fetch-retries; its redaction of URLs in messages), or from local
// files.
type fetcher struct {
	res *resource.Fetcher
	log *slog.Logger
}

// newFetcher returns the install's fetcher: retries is --fetch-retries
// (Infinite, or how many times to try again), backoff the first wait
// (defaultBackoff if 0), proxy the proxy to use (from the environment,
// which cmd/flint reads).
func newFetcher(ctx context.Context, log *slog.Logger, retries int, backoff time.Duration, proxy config.Proxy) (fetcher, error) {
	if backoff == 0 {
		backoff = defaultBackoff
	}
	attempts := 0 // Infinite: until it works
	if retries != Infinite {
		attempts = retries + 1
	}
	f := resource.New(resource.Options{Logger: log, Backoff: backoff, MaxBackoff: maxBackoff, MaxAttempts: attempts})
	if proxy.HTTPProxy != nil || proxy.HTTPSProxy != nil {
		if err := f.Configure(ctx, config.Ignition{Proxy: proxy}); err != nil {
			return fetcher{}, err
		}
	}
	f.SetConfigLimit(maxSmallFile)
	return fetcher{res: f, log: log}, nil
}

// ProxyFromEnv is the proxy the environment names, as curl and Go's
// http.ProxyFromEnvironment read it (HTTP_PROXY, HTTPS_PROXY and
// NO_PROXY, or their lower-case forms), for Deps.Proxy: coreos-installer
// honours them too.
func ProxyFromEnv(getenv func(string) string) config.Proxy {
	var p config.Proxy
	get := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return getenv(strings.ToLower(name))
	}
	if v := get("HTTP_PROXY"); v != "" {
		p.HTTPProxy = &v
	}
	if v := get("HTTPS_PROXY"); v != "" {
		p.HTTPSProxy = &v
	}
	for _, h := range strings.Split(get("NO_PROXY"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			p.NoProxy = append(p.NoProxy, h)
		}
	}
	return p
}

// isURL says whether a location is an http(s) URL rather than a path.
func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// readSmall reads a small file or URL whole.
func (f fetcher) readSmall(ctx context.Context, loc string) ([]byte, error) {
	if isURL(loc) {
		return f.res.Get(ctx, resource.Request{URL: loc})
	}
	file, err := os.Open(loc)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	raw, err := io.ReadAll(io.LimitReader(file, maxSmallFile+1))
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
	s, err := f.res.Open(ctx, resource.Request{URL: o.ImageURL})
	if err != nil {
		return nil, 0, fmt.Errorf("image: %w", err)
	}
	return s, s.Size, nil
}

// decompressor returns the raw image from its file, in the format its
// content says (resource.Decompress). xzFilter, when not nil, decodes xz
// instead of the Go decoder. close releases the decoder.
func decompressor(r io.Reader, xzFilter resource.Decoder) (image io.Reader, format string, close func(), err error) {
	formats := resource.Formats()
	if xzFilter != nil {
		for i := range formats {
			if formats[i].Name == "xz" {
				formats[i].Decode = xzFilter
			}
		}
	}
	image, format, close, err = resource.Decompress(r, formats)
	if err != nil {
		return nil, "", nil, fmt.Errorf("image: %w", err)
	}
	return image, format, close, nil
}
