package resource

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/flintboot/flint/config"
)

// errTotal is the cause of a fetch's context ending because httpTotal ran
// out, to tell it from the caller's own deadline or cancellation.
var errTotal = errors.New("httpTotal exceeded")

// withTotal bounds ctx by the total timeout (0: no bound).
func withTotal(ctx context.Context, total time.Duration) (context.Context, context.CancelFunc) {
	if total <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, total, errTotal)
}

// httpRequest is one logical request, made as often as the retries need.
type httpRequest struct {
	method string
	url    string
	name   string // redacted URL
	header http.Header
	// private are the headers the config or the provider gave: they are
	// not sent to another host on a redirect.
	private     []string
	body        []byte
	retryStatus []int
	localPort   int
	// sign, when set, is called before each attempt with the time to sign
	// (SigV4 signs it): now, corrected by skew once a server said the
	// local clock is off.
	sign      func(req *http.Request, now time.Time) error
	skew      time.Duration
	skewFixed bool
	// answered, when set, is told of every successful answer before its
	// body is read (Open returns on the first).
	answered func(*http.Response)
	// retryAfter is the last answer's Retry-After, when it had one
	// (hasRetryAfter): the wait before the next attempt.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// ignitionToken opens flint's User-Agent. Config servers choose what to
// serve by the client: OpenShift's Machine Config Server reads the spec
// version from Accept and, for clients too old to send it, looks for a
// User-Agent of Ignition/…. flint speaks Ignition's protocol, so it names
// the Ignition release whose Accept header it sends (spec 3.6.0, Ignition
// 2.26.0) before its own product token, as browsers keep "Mozilla/5.0"
// (RFC 9110 section 10.1.5: product tokens in order of significance).
const ignitionToken = "Ignition/" + IgnitionRelease

// IgnitionRelease is the Ignition release flint answers as: the one whose
// newest stable spec (3.6.0) is flint's, in the User-Agent and in
// `ignition --version`.
const IgnitionRelease = "2.26.0"

// defaultHeader is what flint sends with every HTTP request unless the
// config or the provider says otherwise: Ignition's Accept and
// Accept-Encoding exactly (coreos/ignition internal/resource/url.go,
// ConfigHeaders), and a User-Agent of ignitionToken and flint's version.
func (f *Fetcher) defaultHeader() http.Header {
	return http.Header{
		"Accept":          {acceptConfig},
		"Accept-Encoding": {"identity"},
		"User-Agent":      {ignitionToken + " flint/" + f.opts.Version},
	}
}

func (f *Fetcher) newHTTPRequest(method, rawURL, name string, extra http.Header) *httpRequest {
	h := f.defaultHeader()
	var private []string
	for k, v := range extra {
		k = http.CanonicalHeaderKey(k)
		h[k] = slices.Clone(v)
		private = append(private, k)
	}
	return &httpRequest{method: method, url: rawURL, name: name, header: h, private: private}
}

// configHeader turns a resource's httpHeaders into an http.Header; a
// header without a value (a merge removal that survived) is not sent.
func configHeader(hs []config.HTTPHeader) http.Header {
	h := http.Header{}
	for _, x := range hs {
		if x.Value != nil {
			h.Set(x.Name, *x.Value)
		}
	}
	return h
}

// checkRedirect follows up to 10 redirects like net/http, and drops the
// request's private headers on every one, to the same host too, as Ignition
// does (coreos/ignition internal/resource/url.go, CheckRedirect; its
// tests/servers/servers.go checks it): flint's defaults stand in for any
// they had replaced.
func (r *httpRequest) checkRedirect(defaults http.Header) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		for _, k := range r.private {
			req.Header.Del(k)
		}
		for k, v := range defaults {
			if _, ok := req.Header[k]; !ok {
				req.Header[k] = v
			}
		}
		return nil
	}
}

// outcome is what the retry loop does after an attempt failed.
type outcome int

const (
	// giveUp: the error is final (4xx, a certificate, a full disk).
	giveUp outcome = iota
	// wait: the network or the server may heal (connection refused, 5xx):
	// retried until httpTotal runs out, forever without one.
	wait
	// broken: the server answered and then let the body down (cut
	// short, reset or stalled): retried at most maxBrokenAttempts times
	// in all, so that a transfer broken for good ends even without
	// httpTotal.
	broken
	// silent: the server took the connection and sent no answer in time
	// (httpResponseHeaders, the TLS handshake): retried like wait until
	// httpTotal, and like broken when there is none.
	silent
)

// maxBrokenAttempts bounds the attempts at a transfer that keeps breaking
// after the server took the request. With the default idle timeout a
// transfer that stalls for good fails after 3 × 30 s.
const maxBrokenAttempts = 3

// do makes r until it succeeds, fails for good, or httpTotal runs out,
// running each successful answer's body through p into s. Network errors,
// 5xx and r.retryStatus (and a 429 that says when to come back) are
// retried after a backoff between Options.Backoff and Options.MaxBackoff
// with jitter (backoff), or after the answer's Retry-After, capped by the
// fetch's deadline; every retry is logged. A body broken midway (and, without httpTotal, a server that
// does not answer) is retried at most maxBrokenAttempts times in all, and
// a body lost midway only if s can start over.
func (f *Fetcher) do(ctx context.Context, r *httpRequest, p pipeline, s *sink) error {
	nc, transport := f.snapshot(r.localPort)
	ctx, cancel := withTotal(ctx, nc.total)
	defer cancel()
	client := &http.Client{Transport: locationCheck{transport}, CheckRedirect: r.checkRedirect(f.defaultHeader())}

	if err := f.awaitNetwork(ctx, r.name, hostOf(r.url)); err != nil {
		if context.Cause(ctx) == errTotal {
			return fmt.Errorf("%s: %w after %s waiting for the network: no interface got an address", r.name, ErrTimeout, nc.total)
		}
		return fmt.Errorf("%s: %w", r.name, err)
	}
	sched := backoff{base: f.opts.Backoff, limit: f.opts.MaxBackoff, noJitter: f.opts.NoJitter}
	var last error
	brokenN := 0
	var down netDown
	for attempt := 1; ; attempt++ {
		out, err := f.attempt(ctx, client, r, p, s)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if s.n == 0 {
				return stopped(ctx, r.name, nc.total, attempt, last)
			}
			// The answer was streaming when time ran out: say so, and
			// how much of it the caller's writer already holds.
			err = stopped(ctx, r.name, nc.total, attempt, err)
			if s.reset == nil {
				err = fmt.Errorf("%w; %d bytes were already written", err, s.n)
			}
			return err
		}
		if out == silent && nc.total == 0 {
			out = broken
		}
		switch out {
		case giveUp:
			return err
		case broken:
			if brokenN++; brokenN >= maxBrokenAttempts {
				return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
			}
		}
		if n := f.opts.MaxAttempts; n > 0 && attempt >= n {
			if n == 1 {
				return err
			}
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		last = err
		var wait time.Duration
		switch {
		case f.netDownErr(err):
			// The network is not up yet: try again soon, and say so
			// once, not at every try.
			wait = min(netDownPoll, f.opts.Backoff)
			down.note(f.log, msgNoRoute, r.name, wait, err)
		case r.hasRetryAfter:
			// The server said when: no sooner (a fleet hammering an
			// overloaded server keeps it overloaded), up to half as
			// long again at random (spread), and no later than the
			// fetch may last.
			down = netDown{}
			deadline, ok := ctx.Deadline()
			wait = capToDeadline(r.retryAfter+sched.spread(r.retryAfter), deadline, ok, time.Now())
			f.log.Warn("fetch failed, retrying when the server said", "url", r.name, "attempt", attempt, "delay", wait, "error", err)
		default:
			down = netDown{}
			wait = sched.next()
			f.log.Warn("fetch failed, retrying", "url", r.name, "attempt", attempt, "delay", wait, "error", err)
		}
		if pause(ctx, wait) != nil {
			return stopped(ctx, r.name, nc.total, attempt, last)
		}
	}
}

// stopped is the error of a fetch whose context ended: ErrTimeout with the
// last failure when httpTotal ran out, else the caller's reason.
func stopped(ctx context.Context, name string, total time.Duration, attempts int, last error) error {
	if context.Cause(ctx) != errTotal {
		return fmt.Errorf("%s: %w", name, context.Cause(ctx))
	}
	if last == nil {
		return fmt.Errorf("%s: %w after %s waiting for an answer", name, ErrTimeout, total)
	}
	return fmt.Errorf("%w after %s and %d attempts, the last: %w", ErrTimeout, total, attempts, last)
}

// errIdle is the cause of an attempt's context ending because no byte of
// the body arrived for Options.IdleTimeout.
var errIdle = errors.New("idle timeout")

// attempt makes r once and says what to do if it failed.
func (f *Fetcher) attempt(ctx context.Context, client *http.Client, r *httpRequest, p pipeline, s *sink) (outcome, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return giveUp, fmt.Errorf("%s: %w", r.name, unwrapURLError(err))
	}
	req.Header = r.header.Clone()
	if r.sign != nil {
		if err := r.sign(req, time.Now().Add(r.skew)); err != nil {
			return giveUp, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		werr := fmt.Errorf("%s: %w", r.name, scrub(err, r.url))
		switch {
		case !retryable(err):
			return giveUp, werr
		case stalled(err):
			return silent, werr
		}
		return wait, werr
	}
	defer resp.Body.Close()

	r.retryAfter, r.hasRetryAfter = retryAfter(resp.StatusCode, resp.Header, time.Now())
	switch st := resp.StatusCode; {
	case st >= 500 || slices.Contains(r.retryStatus, st) || st == http.StatusTooManyRequests && r.hasRetryAfter:
		drain(resp.Body)
		return wait, &StatusError{URL: r.name, Status: st}
	case st == http.StatusForbidden && r.sign != nil && !r.skewFixed && clockSkewed(resp, &r.skew):
		// A signature is only valid within 15 minutes of the server's
		// clock, and early in boot the local clock may be wrong: sign
		// again with the server's time, once.
		drain(resp.Body)
		r.skewFixed = true
		f.log.Warn("local clock differs from the server's, signing with the server's time", "url", r.name, "skew", r.skew)
		return wait, &StatusError{URL: r.name, Status: st}
	case st == http.StatusNotFound:
		drain(resp.Body)
		return giveUp, fmt.Errorf("%s: %w", r.name, ErrNotFound)
	case st < 200 || st > 299:
		drain(resp.Body)
		return giveUp, &StatusError{URL: r.name, Status: st}
	}

	if r.answered != nil {
		r.answered(resp)
	}
	// The idle timer: a body that sends nothing for IdleTimeout ends
	// the attempt, however long httpTotal is (or without one).
	idle := f.opts.IdleTimeout
	timer := time.AfterFunc(idle, func() { cancel(errIdle) })
	err = p.run(&idleReader{r: resp.Body, timer: timer, idle: idle}, s)
	timer.Stop()
	var re *readError
	if err == nil || !errors.As(err, &re) {
		return giveUp, err
	}
	written := s.n
	switch {
	case context.Cause(ctx) == errIdle:
		err = fmt.Errorf("%s: %w: no data for %s after %d bytes", r.name, ErrStalled, idle, written)
	case !retryable(re.err):
		return giveUp, err
	}
	restarted, rerr := s.restart()
	switch {
	case rerr != nil:
		return giveUp, fmt.Errorf("%w; starting over: %w", err, rerr)
	case !restarted:
		return giveUp, fmt.Errorf("%w; not retried: %d bytes were already written and cannot be taken back", err, written)
	}
	return broken, err
}

// idleReader runs the idle timer only while a read waits for the
// server: the time the writer takes with what was read (a disk, or Open's
// reader taking the body at its own pace) is not the server's idleness.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (i *idleReader) Read(b []byte) (int, error) {
	i.timer.Reset(i.idle)
	n, err := i.r.Read(b)
	i.timer.Stop()
	return n, err
}

// stalled says whether err, from sending a request, means the server took
// the connection and then did not answer in time (httpResponseHeaders,
// the TLS handshake): a timeout, but not one of the dial, which is the
// network not being there yet.
func stalled(err error) bool {
	var ne net.Error
	if !errors.As(unwrapURLError(err), &ne) || !ne.Timeout() {
		return false
	}
	var oe *net.OpError
	return !errors.As(err, &oe) || oe.Op != "dial"
}

// locationCheck refuses a redirect whose Location header is not a URL
// before net/http sees it: net/http's own error quotes the header whole,
// and a Location can carry credentials and tokens that no redactor can
// find in a string that does not parse.
type locationCheck struct{ rt http.RoundTripper }

func (c locationCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return resp, nil
		}
		if _, perr := req.URL.Parse(loc); perr != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("%w (HTTP %d)", ErrBadRedirect, resp.StatusCode)
		}
	}
	return resp, nil
}

// clockSkewed says whether resp's Date is more than 5 minutes from the
// local clock, and sets skew to the difference.
func clockSkewed(resp *http.Response, skew *time.Duration) bool {
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return false
	}
	d := time.Until(date)
	if d.Abs() < 5*time.Minute {
		return false
	}
	*skew = d
	return true
}

// drain reads a little of an unwanted body so the connection can be
// reused.
func drain(body io.Reader) {
	io.Copy(io.Discard, io.LimitReader(body, 64<<10))
}

// retryable says whether err, from a request or from reading a body, is a
// network failure that may heal: a socket call that failed (connection
// refused or reset, network unreachable: any errno), a timeout, name
// resolution, a connection closed early. Certificate and TLS protocol
// errors do not heal by waiting (a TLS alert from the server is a
// *net.OpError too, but carries no errno). Whether the fetch's own context
// ended is for the caller to check: net/http's timeouts match
// context.DeadlineExceeded too.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var (
		certErr   *tls.CertificateVerificationError
		authErr   x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		alert     tls.AlertError
		recordErr tls.RecordHeaderError
	)
	if errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) ||
		errors.As(err, &invalid) || errors.As(err, &alert) || errors.As(err, &recordErr) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true // the server closed the connection before the end
	}
	var (
		errno  syscall.Errno
		dnsErr *net.DNSError
		netErr net.Error
	)
	if errors.As(err, &errno) {
		// Binding the local end (Request.LocalPort) fails the same way
		// every time: the caller must pick another port or lacks the
		// privilege, and waiting for httpTotal would only hide that.
		switch errno {
		case syscall.EADDRINUSE, syscall.EADDRNOTAVAIL, syscall.EACCES, syscall.EPERM:
			return false
		}
		return true
	}
	if errors.As(err, &dnsErr) {
		return true
	}
	return errors.As(unwrapURLError(err), &netErr) && netErr.Timeout()
}

// scrub takes net/http's *url.Error apart: its URL may carry credentials
// and the caller names the URL already. requested is the URL the request
// was made for; when the error is about another one, a redirect led
// there, and that target is kept, redacted.
func scrub(err error, requested string) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if target := config.DescribeURL(ue.URL); target != config.DescribeURL(requested) {
		return fmt.Errorf("redirected to %s: %w", target, ue.Err)
	}
	return ue.Err
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// IdleConnsPerHost is how many idle connections to one host the fetcher
// keeps for reuse: as many as the files stage fetches from one host at
// once (files.DefaultPerHost).
const IdleConnsPerHost = 48

// newTransport builds the HTTP transport for nc; localPort, when not 0, is
// the local port every connection is made from.
func (f *Fetcher) newTransport(nc netConfig, localPort int) *http.Transport {
	t := &http.Transport{
		DialContext:           f.dialer(localPort),
		TLSClientConfig:       &tls.Config{RootCAs: nc.roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: nc.headerTimeout,
		ForceAttemptHTTP2:     true,
		// Keep-alive: the files stage fetches up to IdleConnsPerHost
		// files from one server at once; each connection stays for the
		// next request instead of being closed for lack of room (the
		// default keeps 2 per host) and dialled again, a round trip
		// (and a TLS handshake) per file.
		MaxIdleConns:        2 * IdleConnsPerHost,
		MaxIdleConnsPerHost: IdleConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
		// Accept-Encoding is identity: never decompress behind the
		// caller's back, the config's compression field says what to do.
		DisableCompression: true,
	}
	if nc.proxy != nil {
		t.Proxy = nc.proxy.proxyFor
	}
	return t
}

// dialer returns the dial function: the test seam, or a net.Dialer with
// Ignition's timeouts, bound to localPort when it is not 0.
func (f *Fetcher) dialer(localPort int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if localPort == 0 && f.opts.DialContext != nil {
		return f.opts.DialContext
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if localPort != 0 {
		d.LocalAddr = &net.TCPAddr{Port: localPort}
		d.Control = reuseAddr
	}
	return d.DialContext
}
