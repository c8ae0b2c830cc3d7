package platform

// What the metadata-service providers share: one user-data request with the
// platform's rules for "no user-data", the decodings platforms apply, and the
// race that OpenStack and CloudStack run between a config drive and the
// network.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// userDataService is a platform whose user config is the body of one HTTP
// request to its metadata service.
type userDataService struct {
	env      Env
	platform string
	url      string
	header   http.Header
	// retry lists statuses the platform answers while it is not ready
	// yet, retried like a 5xx (resource.Request.RetryStatus).
	retry []int
	// notFoundIsError: a 404 fails the fetch instead of meaning "no
	// user-data". DigitalOcean and Equinix Metal always serve the
	// user-data URL, so there a 404 means something is wrong.
	notFoundIsError bool
	// decode undoes the platform's encoding of the user-data; nil: none.
	decode func([]byte) ([]byte, error)
}

func (s userDataService) FetchConfig(ctx context.Context) ([]byte, error) {
	r := resource.Request{URL: s.url, Header: s.header, RetryStatus: s.retry}
	data, err := getMetadata(ctx, s.env, s.platform, r)
	if errors.Is(err, resource.ErrNotFound) && !s.notFoundIsError {
		return nil, noUserData(s.env, s.platform, r.URL, err)
	}
	if err != nil {
		return nil, err
	}
	return finishUserData(s.env, s.platform, r.URL, data, s.decode)
}

// getMetadata makes one metadata request with the fetcher's retries. Its
// errors start with prefix (the platform, or the source in a race), name
// the URL and wrap the fetcher's error, so resource.ErrNeedNet,
// resource.ErrNotFound and *resource.StatusError still match.
func getMetadata(ctx context.Context, env Env, prefix string, r resource.Request) ([]byte, error) {
	if env.Getter == nil {
		return nil, fmt.Errorf("%s: %s: no fetcher configured", prefix, config.DescribeURL(r.URL))
	}
	data, err := env.Getter.Get(ctx, r)
	if err != nil {
		// The fetcher's status errors name the URL already.
		if u := config.DescribeURL(r.URL); !strings.Contains(err.Error(), u) {
			return nil, fmt.Errorf("%s: %s: %w", prefix, u, err)
		}
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	return data, nil
}

// noUserData logs that the platform holds no user-data and returns
// ErrNoConfig, naming where flint looked; cause is why (a 404), or nil.
func noUserData(env Env, platform, rawURL string, cause error) error {
	u := config.DescribeURL(rawURL)
	if cause != nil {
		env.logger().Info("no user-data on the platform: booting with an empty config", "platform", platform, "url", u, "reason", cause)
	} else {
		env.logger().Info("user-data is empty: booting with an empty config", "platform", platform, "url", u)
	}
	return fmt.Errorf("%s: %s: %w", platform, u, ErrNoConfig)
}

// finishUserData decodes data with decode (nil: as is) and turns empty
// user-data into ErrNoConfig, as Ignition does for every platform
// (an empty body is an empty config, not an error).
func finishUserData(env Env, platform, rawURL string, data []byte, decode func([]byte) ([]byte, error)) ([]byte, error) {
	if decode != nil {
		var err error
		if data, err = decode(data); err != nil {
			return nil, fmt.Errorf("%s: user-data from %s: %w", platform, config.DescribeURL(rawURL), err)
		}
	}
	if len(data) == 0 {
		return nil, noUserData(env, platform, rawURL, nil)
	}
	env.logger().Info("fetched user-data", "platform", platform, "url", config.DescribeURL(rawURL), "bytes", len(data))
	return data, nil
}

// decodeBase64UserData undoes the standard base64 encoding Azure, Oracle
// Cloud and Akamai apply to user-data. Line breaks and surrounding blanks
// are ignored.
func decodeBase64UserData(data []byte) ([]byte, error) {
	out, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil {
		return nil, fmt.Errorf("decoding base64: %w", err)
	}
	return out, nil
}

// gzipMagic starts every gzip stream (RFC 1952 §2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// gunzipIfCompressed unpacks data when it is a gzip stream and returns it
// unchanged otherwise: a JSON config can never start with 0x1f.
func gunzipIfCompressed(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, gzipMagic) {
		return data, nil
	}
	return gunzip(data)
}

// gunzip unpacks a gzip stream whole; user-data is small.
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompressing gzip: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("decompressing gzip: %w", err)
	}
	return out, nil
}

// raceSource is one place a racing provider looks for the user config.
// Its errors describe themselves ("config drive …", "metadata service:
// …"); the race puts the platform in front.
type raceSource struct {
	name  string
	fetch func(ctx context.Context) ([]byte, error)
}

// raceUserData runs every source at once and returns the first answer:
// the user config, or ErrNoConfig when a source says there is none (a 404
// from the metadata service, a config drive without the file). The other
// sources are then cancelled and waited for, so a config drive is
// unmounted before this returns.
//
// resource.ErrNeedNet from a source ends the race with it: in
// fetch-offline the network sources cannot answer, so Ignition does
// not run these providers there at all, and flint leaves the whole race
// to fetch. When every source fails the error names each one.
func raceUserData(ctx context.Context, env Env, platform string, sources []raceSource) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		name string
		data []byte
		err  error
	}
	results := make(chan result, len(sources))
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for _, s := range sources {
		wg.Go(func() {
			data, err := s.fetch(ctx)
			results <- result{s.name, data, err}
		})
	}

	log := env.logger().With("platform", platform)
	var errs raceErrors
	for range sources {
		r := <-results
		switch {
		case r.err == nil && len(r.data) == 0:
			log.Info("user-data is empty: booting with an empty config", "source", r.name)
			return nil, fmt.Errorf("%s: %s: %w", platform, r.name, ErrNoConfig)
		case r.err == nil:
			log.Info("fetched user-data", "source", r.name, "bytes", len(r.data))
			return r.data, nil
		case errors.Is(r.err, ErrNoConfig):
			log.Info("no user-data on the platform: booting with an empty config", "source", r.name, "reason", r.err)
			return nil, fmt.Errorf("%s: %w", platform, r.err)
		case errors.Is(r.err, resource.ErrNeedNet):
			return nil, fmt.Errorf("%s: %w", platform, r.err)
		default:
			log.Warn("user-data source failed", "source", r.name, "error", r.err)
			errs = append(errs, r.err)
		}
	}
	return nil, fmt.Errorf("%s: no source answered: %w", platform, errs)
}

// raceErrors are the failures of every source of a race, on one line;
// errors.Is and errors.As see each.
type raceErrors []error

func (e raceErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e raceErrors) Unwrap() []error { return e }

// sessionToken asks a metadata service for a session token with r (a
// PUT, as both IMDSv2 and Akamai's service want) and returns it trimmed;
// an empty one is an error saying empty, after prefix and the URL.
func sessionToken(ctx context.Context, env Env, prefix string, r resource.Request, empty string) (string, error) {
	data, err := getMetadata(ctx, env, prefix, r)
	if err != nil {
		return "", err
	}
	token := string(bytes.TrimSpace(data))
	if token == "" {
		return "", fmt.Errorf("%s: %s: %s", prefix, config.DescribeURL(r.URL), empty)
	}
	return token, nil
}
