package resource

import (
	"errors"
	"fmt"
	"net/http"
)

// Errors a fetch can end with, for errors.Is.
var (
	// ErrNeedNet means the fetch needs the network and the fetcher is
	// offline (the fetch-offline stage): the engine sets the neednet flag.
	ErrNeedNet = errors.New("fetching needs the network")
	// ErrNotFound means the server says the resource does not exist (404).
	ErrNotFound = errors.New("resource not found")
	// ErrTimeout means the total time allowed (timeouts.httpTotal, or
	// -fetch-timeout for the provider) ran out, retries included.
	ErrTimeout = errors.New("timed out")
	// ErrSchemeUnsupported means the URL's scheme is not one flint fetches.
	ErrSchemeUnsupported = errors.New("unsupported URL scheme")
	// ErrCompressionUnsupported means compression was asked for a source
	// that cannot have it (s3, arn).
	ErrCompressionUnsupported = errors.New("compression is not supported for this source")
	// ErrTooLarge means a config or metadata answer is larger than
	// MaxConfigSize: such a thing is not a config.
	ErrTooLarge = errors.New("too large")
	// ErrStalled means the server sent no byte of the body for
	// Options.IdleTimeout, on every attempt.
	ErrStalled = errors.New("transfer stalled")
	// ErrBadRedirect means the server redirected to a Location that is
	// not a URL (which is not quoted: it may hold credentials).
	ErrBadRedirect = errors.New("redirect to a Location header that is not a valid URL")
)

// HashMismatchError says the fetched data is not what the config's
// verification hash says it must be.
type HashMismatchError struct {
	URL      string // redacted: no credentials or query
	Expected string // <function>-<hex>
	Actual   string // <function>-<hex>
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("%s: hash verification failed: expected %s, got %s", e.URL, e.Expected, e.Actual)
}

// StatusError is an HTTP answer that is neither success nor worth retrying.
type StatusError struct {
	URL    string // redacted
	Status int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP status %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// Request is a metadata request a platform provider makes: a plain URL
// fetched with the fetcher's retries and timeouts, plus what the platform's
// protocol needs.
type Request struct {
	URL    string
	Method string // "" is GET
	Header http.Header
	Body   []byte
	// RetryStatus lists statuses retried like a 5xx (Azure IMDS: 404, 410,
	// 429; Oracle: 429).
	RetryStatus []int
	// LocalPort, when not 0, is the local TCP port to connect from
	// (Scaleway answers only from a privileged port).
	LocalPort int
}
