package resource

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/tftp"
)

// MaxConfigSize bounds what FetchConfig and Get hold in memory unless
// SetConfigLimit says otherwise: a config or a metadata answer larger than
// this is refused with ErrTooLarge.
const MaxConfigSize = 64 << 20

// LinkLocalMetadata is the link-local address at which EC2's instance
// metadata service, GCE's metadata server, Azure's IMDS and most other
// clouds' metadata services answer (RFC 3927's 169.254.0.0/16).
const LinkLocalMetadata = "http://169.254.169.254"

// Ignition's defaults (coreos/ignition internal/resource/http.go).
const (
	defaultBackoff       = 200 * time.Millisecond
	defaultMaxBackoff    = 5 * time.Second
	defaultHeaderTimeout = 10 * time.Second
	defaultIMDS          = LinkLocalMetadata
	defaultGCEMetadata   = LinkLocalMetadata
	defaultGCS           = "https://storage.googleapis.com"
	// acceptConfig is sent with every HTTP request, as Ignition does
	// (configHeaders in coreos/ignition internal/resource/url.go).
	acceptConfig = "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1"
)

// Options configure a Fetcher. The zero value fetches from the real
// endpoints with Ignition's timeouts.
type Options struct {
	// Logger receives retries and other events; nil discards them.
	Logger *slog.Logger
	// Offline makes every fetch except of a data URL fail with ErrNeedNet
	// (the fetch-offline stage).
	Offline bool
	// Version is flint's version, sent in the User-Agent after Ignition's
	// compatibility token: Ignition/2.26.0 flint/<Version>.
	Version string

	// Backoff is the shortest delay before a retry (0: 200 ms), and
	// MaxBackoff the longest (0: 5 s); between them each delay is drawn
	// at random up to three times the last (decorrelated jitter), so that
	// machines that failed together do not retry together. Tests shorten
	// both.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// MaxAttempts, when not 0, bounds the attempts at one request, retries
	// included (flint install's --fetch-retries); 0 retries until
	// httpTotal runs out, forever without one, as Ignition does.
	MaxAttempts int
	// NoJitter makes the delays double from Backoff to MaxBackoff with no
	// randomness, as Ignition's do: the fleet benchmark
	// (tests/bench/fleet) measures both schedules with one binary.
	NoJitter bool
	// IdleTimeout ends an attempt whose body sends no byte for that long
	// (0: DefaultIdleTimeout); the transfer is then retried, at most
	// three attempts in all.
	IdleTimeout time.Duration

	// Platform is the ignition.platform.id. On a platform other than aws
	// the EC2 instance metadata service is not asked for s3 and arn
	// credentials (Ignition asks it on aws only); "" (unknown) asks it.
	Platform string
	// IMDSEndpoint is the EC2 instance metadata service, for the instance
	// role's credentials and region used with s3 and arn URLs (""
	// means http://169.254.169.254).
	IMDSEndpoint string
	// S3Endpoint, when set, replaces the AWS S3 endpoints: requests then go
	// path-style to <S3Endpoint>/<bucket>/<key> (for an access point ARN,
	// <S3Endpoint>/<name>-<account>/<key>), for the bucket region lookup
	// too.
	S3Endpoint string
	// GCEMetadataEndpoint is the GCE metadata server, for the default
	// service account's token used with gs URLs ("" means
	// http://169.254.169.254).
	GCEMetadataEndpoint string
	// AzureIMDSEndpoint is Azure's instance metadata service, for the
	// managed identity's token used with Azure Blob Storage URLs on azure
	// ("" means http://169.254.169.254).
	AzureIMDSEndpoint string
	// GCSEndpoint replaces https://storage.googleapis.com for gs URLs.
	GCSEndpoint string
	// TFTPPort is the port of tftp URLs without one (0: 69).
	TFTPPort int
	// TFTPTimeout is how long the TFTP client waits for a packet before
	// sending its last one again (0: 5 s).
	TFTPTimeout time.Duration
	// AwaitNetwork says the network is being brought up (the engine sets
	// it in the initramfs once flint-neednet started it): a fetch from a
	// server named by a host name waits until an interface has an
	// address before looking the name up, and a failed lookup while none
	// has is tried again every 50 ms, not after a doubled backoff.
	AwaitNetwork bool
	// NetworkUp replaces NetworkUp, for tests.
	NetworkUp func() bool
	// DialContext, when set, replaces the dialer for every TCP connection
	// (except those from a Request's LocalPort) and for the UDP route
	// check before a TFTP transfer: tests map host names to local servers
	// with it.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultIdleTimeout is how long a body may send nothing before the
// attempt is abandoned (flint's; Ignition has none and waits for
// httpTotal, forever without one). With maxBrokenAttempts a transfer that
// stalls for good ends within a minute and a half.
const DefaultIdleTimeout = 30 * time.Second

// Fetcher fetches resources. It is safe for concurrent use; Configure and
// SetTotalTimeout apply to fetches that start after them.
type Fetcher struct {
	opts Options
	log  *slog.Logger
	// meta talks to link-local metadata services (EC2, GCE, Azure) for cloud
	// credentials: never through a proxy, with short timeouts.
	meta *http.Client
	// netSeen: an interface had an address once (networkUp), so the
	// fetches after it ask no more (in the initramfs the network does
	// not go away under the stages).
	netSeen atomic.Bool

	mu        sync.Mutex
	net       netConfig
	transport *http.Transport
	local     map[int]*http.Transport // by Request.LocalPort
	caBundles map[string][]byte       // fetched CA bundles by source and hash
	// configMax bounds FetchConfig and Get (SetConfigLimit); 0 is
	// MaxConfigSize.
	configMax int64
	aws       awsState
	gcs       tokenState
	az        tokenState

	// bufs holds the copy buffers of finished fetches (*[]byte of
	// copyBufferSize) for the next ones: thousands of small files would
	// otherwise each allocate and clear one.
	bufs sync.Pool
}

// netConfig is what the config says about fetching.
type netConfig struct {
	total         time.Duration // 0: no limit
	headerTimeout time.Duration
	proxy         *proxyConfig   // nil: direct
	roots         *x509.CertPool // nil: the system pool
}

// New returns a Fetcher with Ignition's defaults: no total timeout,
// response headers within 10 s, no proxy, the system's CAs.
func New(o Options) *Fetcher {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Backoff <= 0 {
		o.Backoff = defaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = defaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.Backoff)
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.IMDSEndpoint == "" {
		o.IMDSEndpoint = defaultIMDS
	}
	if o.GCEMetadataEndpoint == "" {
		o.GCEMetadataEndpoint = defaultGCEMetadata
	}
	if o.AzureIMDSEndpoint == "" {
		o.AzureIMDSEndpoint = defaultIMDS
	}
	if o.GCSEndpoint == "" {
		o.GCSEndpoint = defaultGCS
	}
	if o.TFTPPort == 0 {
		o.TFTPPort = tftp.DefaultPort
	}
	f := &Fetcher{
		opts:      o,
		log:       o.Logger,
		caBundles: map[string][]byte{},
	}
	metaTransport := &http.Transport{
		DialContext:           f.dialer(0),
		ResponseHeaderTimeout: 5 * time.Second,
		DisableCompression:    true,
	}
	f.meta = &http.Client{
		Transport: metaTransport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // metadata services do not redirect
		},
	}
	f.install(netConfig{headerTimeout: defaultHeaderTimeout})
	return f
}

// Configure applies a config's timeouts, proxy and certificate
// authorities to later fetches. The CA bundles are fetched first (with the
// new timeouts and proxy, trusting the CAs configured so far), so a bundle
// may itself be remote; each is fetched once per Fetcher. Every call
// replaces what an earlier one set, the total timeout of SetTotalTimeout
// included: call it with the final, merged config.
func (f *Fetcher) Configure(ctx context.Context, ign config.Ignition) error {
	f.mu.Lock()
	nc := f.net
	f.mu.Unlock()

	nc.headerTimeout = defaultHeaderTimeout
	if t := ign.Timeouts.HTTPResponseHeaders; t != nil {
		nc.headerTimeout = time.Duration(*t) * time.Second
	}
	nc.total = 0
	if t := ign.Timeouts.HTTPTotal; t != nil {
		nc.total = time.Duration(*t) * time.Second
	}
	proxy, err := newProxyConfig(ign.Proxy)
	if err != nil {
		return err
	}
	nc.proxy = proxy
	f.install(nc)

	cas := ign.Security.TLS.CertificateAuthorities
	if len(cas) == 0 {
		nc.roots = nil
		f.install(nc)
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		f.log.Warn("no system certificate pool; trusting only the config's certificate authorities", "error", err)
		pool = x509.NewCertPool()
	}
	for _, ca := range cas {
		name := "(no source)"
		if ca.Source != nil {
			name = config.DescribeURL(*ca.Source)
		}
		bundle, err := f.CABundle(ctx, ca)
		if err != nil {
			return fmt.Errorf("certificate authority: %w", err)
		}
		if !pool.AppendCertsFromPEM(bundle) {
			return fmt.Errorf("certificate authority %s: no PEM certificate in it", name)
		}
	}
	nc.roots = pool
	f.install(nc)
	return nil
}

// CABundle returns a certificate authority bundle: the one an earlier
// Configure fetched and trusts, or a fresh fetch. The engine inlines it into
// the cache from here, so the later stages trust exactly what this one did
// and the bundle is fetched once.
func (f *Fetcher) CABundle(ctx context.Context, ca config.Resource) ([]byte, error) {
	key := deref(ca.Source) + "\x00" + deref(ca.Compression) + "\x00" + deref(ca.Verification.Hash)
	f.mu.Lock()
	b, ok := f.caBundles[key]
	f.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := f.FetchConfig(ctx, ca)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.caBundles[key] = b
	f.mu.Unlock()
	return b, nil
}

// SetTotalTimeout replaces httpTotal (0: no limit) until the next
// Configure: the engine bounds the provider's fetch with -fetch-timeout.
func (f *Fetcher) SetTotalTimeout(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.net.total = d
}

// SetConfigLimit bounds what later FetchConfig and Get calls read to n
// bytes (after decompression): the transfer stops at the first byte past
// it, with ErrTooLarge naming n, so a config over the stage's size limit
// is never downloaded whole. n <= 0 restores MaxConfigSize. Fetch, which
// streams files to disk, has no such bound.
func (f *Fetcher) SetConfigLimit(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.configMax = n
}

// newConfigBuffer returns the buffer of one FetchConfig or Get, bounded
// by the config limit.
func (f *Fetcher) newConfigBuffer() *limitedBuffer {
	f.mu.Lock()
	n := f.configMax
	f.mu.Unlock()
	if n <= 0 {
		n = MaxConfigSize
	}
	return &limitedBuffer{max: n}
}

// install makes nc the configuration of later fetches.
func (f *Fetcher) install(nc netConfig) {
	f.mu.Lock()
	old, oldLocal := f.transport, f.local
	f.net = nc
	f.transport = f.newTransport(nc, 0)
	f.local = map[int]*http.Transport{}
	f.mu.Unlock()
	if old != nil {
		old.CloseIdleConnections()
	}
	for _, t := range oldLocal {
		t.CloseIdleConnections()
	}
}

// snapshot returns the configuration and transport for one fetch.
func (f *Fetcher) snapshot(localPort int) (netConfig, *http.Transport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if localPort == 0 {
		return f.net, f.transport
	}
	t, ok := f.local[localPort]
	if !ok {
		t = f.newTransport(f.net, localPort)
		f.local[localPort] = t
	}
	return f.net, t
}

// Fetch streams res into w: gzip-decompressed if the resource says so and
// checked against its verification hash on the fly, never held whole. On a
// hash mismatch (*HashMismatchError) w has received all the data. A
// transfer broken midway (a connection lost, a body cut short or stalled)
// is started over when w is a Rewinder, else only while nothing was
// written: callers write to a temporary file and rename it once Fetch
// succeeded. A resource without a source writes nothing.
func (f *Fetcher) Fetch(ctx context.Context, res config.Resource, w io.Writer) error {
	return f.fetch(ctx, res, rewindSink(w))
}

// FetchConfig fetches a config (ignition.config.merge/replace, the URL on
// the kernel command line) or a CA bundle whole, decompressed and verified.
// It refuses more than the config limit (SetConfigLimit, else
// MaxConfigSize) with ErrTooLarge, reading no further. A connection
// lost midway is retried from the start. A resource without a source
// yields nil.
func (f *Fetcher) FetchConfig(ctx context.Context, res config.Resource) ([]byte, error) {
	buf := f.newConfigBuffer()
	if err := f.fetch(ctx, res, bufferSink(buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (f *Fetcher) fetch(ctx context.Context, res config.Resource, s *sink) error {
	if res.Source == nil || *res.Source == "" {
		return nil
	}
	src := *res.Source
	u, err := url.Parse(src)
	if err != nil {
		return fmt.Errorf("%s: invalid URL: %w", config.DescribeURL(src), unwrapURLError(err))
	}
	name := config.DescribeParsedURL(u)
	p, err := newPipeline(res, name)
	if err != nil {
		return err
	}
	p.bufs = &f.bufs
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "data", "http", "https", "tftp", "s3", "arn", "gs":
	default:
		return fmt.Errorf("%s: %w %q", name, ErrSchemeUnsupported, u.Scheme)
	}
	if scheme == "data" {
		return f.fetchData(src, p, s)
	}
	if f.opts.Offline {
		return fmt.Errorf("%s: %w", name, ErrNeedNet)
	}
	f.log.Debug("fetching", "url", name)
	switch scheme {
	case "http", "https":
		if f.azureBlob(u) {
			return f.fetchAzureBlob(ctx, src, name, configHeader(res.HTTPHeaders), p, s)
		}
		hr := f.newHTTPRequest(http.MethodGet, src, name, configHeader(res.HTTPHeaders))
		return f.do(ctx, hr, p, s)
	case "tftp":
		return f.fetchTFTP(ctx, u, p, s)
	case "s3", "arn":
		if p.gzip {
			return fmt.Errorf("%s: %w", name, ErrCompressionUnsupported)
		}
		return f.fetchS3(ctx, u, p, s)
	default: // gs
		return f.fetchGS(ctx, u, p, s)
	}
}

// Offline says whether the fetcher refuses every URL but data URLs (the
// fetch-offline stage), for a provider that has to find its server before
// it can ask the fetcher anything (CloudStack waits for a DHCP lease).
func (f *Fetcher) Offline() bool { return f.opts.Offline }

// requestHTTP is the http(s) request r asks for, with the name its errors
// and logs give the URL; use says what for, in the error of another
// scheme. Offline, it is ErrNeedNet.
func (f *Fetcher) requestHTTP(r Request, use string) (*httpRequest, string, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, "", fmt.Errorf("%s: invalid URL: %w", config.DescribeURL(r.URL), unwrapURLError(err))
	}
	name := config.DescribeParsedURL(u)
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return nil, "", fmt.Errorf("%s: %w %q %s", name, ErrSchemeUnsupported, u.Scheme, use)
	}
	if f.opts.Offline {
		return nil, "", fmt.Errorf("%s: %w", name, ErrNeedNet)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	hr := f.newHTTPRequest(method, r.URL, name, r.Header)
	hr.body = r.Body
	hr.retryStatus = r.RetryStatus
	hr.localPort = r.LocalPort
	return hr, name, nil
}

// Get makes one metadata request for a platform provider, with the
// fetcher's retries and timeouts, and returns the body of the successful
// answer (at most the config limit: SetConfigLimit, else MaxConfigSize). The request's headers override the
// default ones and are dropped on a redirect to another host.
func (f *Fetcher) Get(ctx context.Context, r Request) ([]byte, error) {
	hr, name, err := f.requestHTTP(r, "for a metadata request")
	if err != nil {
		return nil, err
	}
	buf := f.newConfigBuffer()
	if err := f.do(ctx, hr, pipeline{name: name}, bufferSink(buf)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fetchTFTP reads a tftp://host[:port]/file URL. The TFTP client
// retransmits lost packets itself; a failed transfer is not retried, as in
// Ignition.
func (f *Fetcher) fetchTFTP(ctx context.Context, u *url.URL, p pipeline, s *sink) error {
	f.mu.Lock()
	total := f.net.total
	f.mu.Unlock()
	ctx, cancel := withTotal(ctx, total)
	defer cancel()

	port := u.Port()
	if port == "" {
		port = fmt.Sprint(f.opts.TFTPPort)
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	file := strings.TrimPrefix(u.Path, "/")
	if err := f.waitRoute(ctx, p.name, u.Hostname(), addr); err != nil {
		if context.Cause(ctx) == errTotal {
			return fmt.Errorf("%s: %w after %s", p.name, ErrTimeout, total)
		}
		return fmt.Errorf("%s: %w", p.name, err)
	}
	client := &tftp.Client{Timeout: f.opts.TFTPTimeout}

	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := client.Get(ctx, addr, file, pw)
		pw.CloseWithError(err) // nil: EOF
		done <- err
	}()
	err := p.run(pr, s)
	pr.CloseWithError(errStopped) // ends the transfer if run stopped early
	getErr := <-done

	if ctx.Err() != nil && context.Cause(ctx) == errTotal {
		return fmt.Errorf("%s: %w after %s", p.name, ErrTimeout, total)
	}
	if te := tftpError(getErr); te != nil && te.Code == tftp.CodeFileNotFound {
		return fmt.Errorf("%s: %w (%s)", p.name, ErrNotFound, te.Message)
	}
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
