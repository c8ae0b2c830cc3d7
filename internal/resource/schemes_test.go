package resource_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/tftp/tftptest"
)

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestDataURLs(t *testing.T) {
	hello := []byte("hello world")
	f, _ := newFetcher(t, resource.Options{Offline: true}) // data URLs need no network
	tests := []struct {
		name string
		res  func() config.Resource
		want []byte
	}{
		{"plain", func() config.Resource { return res("data:,hello%20world") }, hello},
		{"base64", func() config.Resource { return res("data:;base64," + base64.StdEncoding.EncodeToString(hello)) }, hello},
		{"media type and base64", func() config.Resource {
			return res("data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(hello))
		}, hello},
		{"gzip, base64 and hash", func() config.Resource {
			return withGzip(withHash(res(dataURL(gzipped(hello))), sha256Of(hello)))
		}, hello},
		{"empty", func() config.Resource { return res("data:,") }, []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.Fetch(context.Background(), tt.res(), &buf); err != nil || !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("Fetch = %q, %v; want %q", buf.Bytes(), err, tt.want)
			}
		})
	}
	t.Run("wrong hash does not show the content", func(t *testing.T) {
		err := f.Fetch(context.Background(), withHash(res("data:,topsecret"), sha256Of(hello)), io.Discard)
		var he *resource.HashMismatchError
		if !errors.As(err, &he) || strings.Contains(err.Error(), "topsecret") {
			t.Errorf("Fetch = %v, want a HashMismatchError without the content", err)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		if err := f.Fetch(context.Background(), res("data:;base64,!!!secret"), io.Discard); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Fetch of an invalid data URL = %v, want an error without the content", err)
		}
	})
}

func TestNoSourceAndBadSchemes(t *testing.T) {
	f, _ := newFetcher(t, resource.Options{})
	var buf bytes.Buffer
	if err := f.Fetch(context.Background(), config.Resource{}, &buf); err != nil || buf.Len() != 0 {
		t.Errorf("Fetch without source = %q, %v; want nothing", buf.Bytes(), err)
	}
	for _, u := range []string{"ftp://example.com/x", "file:///etc/passwd", "example.com/config.ign"} {
		if err := f.Fetch(context.Background(), res(u), io.Discard); !errors.Is(err, resource.ErrSchemeUnsupported) {
			t.Errorf("Fetch(%s) = %v, want ErrSchemeUnsupported", u, err)
		}
	}
}

func TestOffline(t *testing.T) {
	f, _ := newFetcher(t, resource.Options{Offline: true})
	for _, u := range []string{
		"http://127.0.0.1:1/x", "https://example.com/x", "tftp://127.0.0.1/x",
		"s3://bucket/key", "arn:aws:s3:::bucket/key", "gs://bucket/object",
	} {
		if err := f.Fetch(context.Background(), res(u), io.Discard); !errors.Is(err, resource.ErrNeedNet) {
			t.Errorf("offline Fetch(%s) = %v, want ErrNeedNet", u, err)
		}
		if _, err := f.FetchConfig(context.Background(), res(u)); !errors.Is(err, resource.ErrNeedNet) {
			t.Errorf("offline FetchConfig(%s) = %v, want ErrNeedNet", u, err)
		}
	}
	if _, err := f.Get(context.Background(), resource.Request{URL: "http://127.0.0.1:1/meta"}); !errors.Is(err, resource.ErrNeedNet) {
		t.Errorf("offline Get = %v, want ErrNeedNet", err)
	}
}

func TestTFTP(t *testing.T) {
	multi := bytes.Repeat([]byte("0123456789"), 1000) // 7 blocks of 1448
	files := map[string][]byte{
		"small.ign":      []byte(`{"ignition":{"version":"3.6.0"}}`),
		"pxe/multi.bin":  multi,
		"pxe/multi.gz":   gzipped(multi),
		"pxe/exact1448":  bytes.Repeat([]byte{7}, 1448),
		"pxe/empty.file": {},
	}
	srv := tftptest.NewServer(files)
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{TFTPTimeout: 200 * time.Millisecond})
	base := "tftp://" + srv.Addr()

	tests := []struct {
		name string
		res  config.Resource
		want []byte
	}{
		{"small", res(base + "/small.ign"), files["small.ign"]},
		{"multi-block with hash", withHash(res(base+"/pxe/multi.bin"), sha512Of(multi)), multi},
		{"gzip", withGzip(withHash(res(base+"/pxe/multi.gz"), sha512Of(multi))), multi},
		{"exactly one block", res(base + "/pxe/exact1448"), files["pxe/exact1448"]},
		{"empty", res(base + "/pxe/empty.file"), []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.Fetch(context.Background(), tt.res, &buf); err != nil || !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("Fetch = %d bytes, %v; want %d bytes", buf.Len(), err, len(tt.want))
			}
		})
	}
	for _, r := range srv.Requests() {
		if r.Options["blksize"] != "1448" || r.Options["tsize"] != "0" || r.Mode != "octet" {
			t.Errorf("request %+v: want octet mode with blksize 1448 and tsize", r)
		}
	}

	t.Run("server negotiates a smaller block size", func(t *testing.T) {
		small := tftptest.NewUnstartedServer(files)
		small.MaxBlockSize = 512
		small.Start()
		defer small.Close()
		got, err := f.FetchConfig(context.Background(), res("tftp://"+small.Addr()+"/pxe/multi.bin"))
		if err != nil || !bytes.Equal(got, multi) {
			t.Errorf("FetchConfig = %d bytes, %v; want %d", len(got), err, len(multi))
		}
	})
	t.Run("default port from Options", func(t *testing.T) {
		g, _ := newFetcher(t, resource.Options{TFTPPort: srv.Port()})
		got, err := g.FetchConfig(context.Background(), res("tftp://127.0.0.1/small.ign"))
		if err != nil || !bytes.Equal(got, files["small.ign"]) {
			t.Errorf("FetchConfig without port = %q, %v", got, err)
		}
	})
	t.Run("file not found", func(t *testing.T) {
		if err := f.Fetch(context.Background(), res(base+"/missing.ign"), io.Discard); !errors.Is(err, resource.ErrNotFound) {
			t.Errorf("Fetch(missing) = %v, want ErrNotFound", err)
		}
	})
	t.Run("wrong hash", func(t *testing.T) {
		err := f.Fetch(context.Background(), withHash(res(base+"/small.ign"), sha512Of(multi)), io.Discard)
		var he *resource.HashMismatchError
		if !errors.As(err, &he) || he.URL != base+"/small.ign" {
			t.Errorf("Fetch = %v, want *HashMismatchError for %s", err, base+"/small.ign")
		}
	})
	t.Run("httpTotal bounds a silent server", func(t *testing.T) {
		quiet := tftptest.NewServer(nil)
		addr := quiet.Addr()
		quiet.Close()
		g, _ := newFetcher(t, resource.Options{TFTPTimeout: time.Hour})
		g.SetTotalTimeout(200 * time.Millisecond)
		if err := g.Fetch(context.Background(), res("tftp://"+addr+"/x"), io.Discard); !errors.Is(err, resource.ErrTimeout) {
			t.Errorf("Fetch from a silent server = %v, want ErrTimeout", err)
		}
	})
}

// fakeIMDS is an EC2 instance metadata service (IMDSv2) with one role.
func fakeIMDS(t *testing.T, role, region string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/latest/api/token" {
			if r.Method != http.MethodPut || r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") == "" {
				http.Error(w, "IMDSv2 token requests are PUT with a TTL", http.StatusBadRequest)
				return
			}
			io.WriteString(w, "imds-token")
			return
		}
		if r.Header.Get("X-aws-ec2-metadata-token") != "imds-token" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/latest/meta-data/placement/region":
			io.WriteString(w, region)
		case "/latest/meta-data/iam/security-credentials/":
			if role == "" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, role+"\n")
		case "/latest/meta-data/iam/security-credentials/" + role:
			fmt.Fprintf(w, `{"Code":"Success","LastUpdated":"2024-01-01T00:00:00Z","Type":"AWS-HMAC",`+
				`"AccessKeyId":"ASIATESTKEY","SecretAccessKey":"test/secret+key","Token":"session-token",`+
				`"Expiration":%q}`, time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339))
		default:
			http.NotFound(w, r)
		}
	}))
}

// fakeIMDSv1 is an instance whose metadata service refuses IMDSv2 tokens
// (403, as with HttpTokens optional and the PUT hop limit exceeded) and
// answers without one; hits counts its requests.
func fakeIMDSv1(t *testing.T, role, region string, hits *atomic.Int32) *httptest.Server {
	v2 := fakeIMDS(t, role, region)
	t.Cleanup(v2.Close)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/latest/api/token" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		r.Header.Set("X-aws-ec2-metadata-token", "imds-token")
		v2.Config.Handler.ServeHTTP(w, r)
	}))
}

// fakeS3 serves objects path-style, names the bucket's region on HEAD,
// and checks every signed request's signature itself.
type fakeS3 struct {
	*httptest.Server
	t       *testing.T
	region  string
	ahead   time.Duration     // how far the server's clock is ahead of ours
	objects map[string][]byte // by escaped path: /bucket/key
	mu      sync.Mutex
	gets    []*http.Request
	heads   int
}

func newFakeS3(t *testing.T, region string, objects map[string][]byte) *fakeS3 {
	s := &fakeS3{t: t, region: region, objects: objects}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *fakeS3) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		s.mu.Lock()
		s.heads++
		s.mu.Unlock()
		w.Header().Set("X-Amz-Bucket-Region", s.region)
		w.WriteHeader(http.StatusForbidden) // a private bucket still names its region
		return
	}
	s.mu.Lock()
	s.gets = append(s.gets, r.Clone(context.Background()))
	s.mu.Unlock()
	if auth := r.Header.Get("Authorization"); auth != "" {
		now := time.Now().Add(s.ahead)
		w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
		if ts, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date")); err == nil && now.Sub(ts).Abs() > 15*time.Minute {
			http.Error(w, "RequestTimeTooSkewed", http.StatusForbidden)
			return
		}
		if err := verifySigV4(r, "test/secret+key", now); err != nil {
			s.t.Errorf("S3 request %s: %v", r.URL, err)
			http.Error(w, "SignatureDoesNotMatch", http.StatusForbidden)
			return
		}
	}
	obj, ok := s.objects[r.URL.EscapedPath()+"?"+r.URL.RawQuery]
	if !ok {
		obj, ok = s.objects[r.URL.EscapedPath()]
	}
	if !ok {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	w.Write(obj)
}

func (s *fakeS3) lastGet() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gets) == 0 {
		return nil
	}
	return s.gets[len(s.gets)-1]
}

var authRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$`)

// verifySigV4 recomputes the signature of a request as the server received
// it, written independently of the fetcher's signer from the SigV4
// documentation, and returns what does not match.
func verifySigV4(r *http.Request, secret string, now time.Time) error {
	m := authRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return fmt.Errorf("malformed Authorization %q", r.Header.Get("Authorization"))
	}
	day, region, signed, sig := m[2], m[3], m[4], m[5]
	amzDate := r.Header.Get("X-Amz-Date")
	ts, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || !strings.HasPrefix(amzDate, day) || now.Sub(ts).Abs() > 15*time.Minute {
		return fmt.Errorf("X-Amz-Date %q does not match the scope day %s or now", amzDate, day)
	}
	enc := func(s string) string { // RFC 3986 unreserved characters stay
		return strings.NewReplacer("+", "%20", "%7E", "~", "*", "%2A").Replace(url.QueryEscape(s))
	}
	var query []string
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			query = append(query, enc(k)+"="+enc(v))
		}
	}
	sort.Strings(query)
	var canon strings.Builder
	fmt.Fprintf(&canon, "%s\n%s\n%s\n", r.Method, r.URL.EscapedPath(), strings.Join(query, "&"))
	for _, h := range strings.Split(signed, ";") {
		v := r.Header.Get(h)
		if h == "host" {
			v = r.Host
		}
		fmt.Fprintf(&canon, "%s:%s\n", h, strings.TrimSpace(v))
	}
	fmt.Fprintf(&canon, "\n%s\n%s", signed, r.Header.Get("X-Amz-Content-Sha256"))
	ch := sha256.Sum256([]byte(canon.String()))
	scope := day + "/" + region + "/s3/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(ch[:])
	mac := func(key []byte, s string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(s))
		return h.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+secret), day), region), "s3"), "aws4_request")
	if want := hex.EncodeToString(mac(k, toSign)); want != sig {
		return fmt.Errorf("signature %s, want %s for canonical request\n%s", sig, want, canon.String())
	}
	return nil
}

func TestS3(t *testing.T) {
	content := []byte(`{"ignition":{"version":"3.6.0"}}`)
	objects := map[string][]byte{
		"/flint-bucket/dir/config.ign":                 content,
		"/flint-bucket/dir/config.ign?versionId=v%201": []byte("old version"),
		"/flint-bucket/a%20b/c%2Bd%3D.ign":             content,
		"/myap-123456789012/ap/key.ign":                content,
	}
	imds := fakeIMDS(t, "flint-role", "eu-west-1")
	defer imds.Close()
	noRole := fakeIMDS(t, "", "eu-west-1")
	defer noRole.Close()
	var v1Hits atomic.Int32
	v1 := fakeIMDSv1(t, "flint-role", "eu-west-1", &v1Hits)
	defer v1.Close()

	tests := []struct {
		name       string
		imds       string
		platform   string
		url        string
		want       []byte
		wantRegion string // in the signature's scope; "" for anonymous
		wantHead   bool
	}{
		{name: "s3 URL with instance credentials", imds: imds.URL, url: "s3://flint-bucket/dir/config.ign", want: content, wantRegion: "eu-central-1", wantHead: true},
		{name: "versionId", imds: imds.URL, url: "s3://flint-bucket/dir/config.ign?versionId=v%201", want: []byte("old version"), wantRegion: "eu-central-1", wantHead: true},
		{name: "key that needs escaping", imds: imds.URL, url: "s3://flint-bucket/a%20b/c+d=.ign", want: content, wantRegion: "eu-central-1", wantHead: true},
		{name: "bucket ARN", imds: imds.URL, url: "arn:aws:s3:::flint-bucket/dir/config.ign", want: content, wantRegion: "eu-central-1", wantHead: true},
		{name: "access point ARN names its region", imds: imds.URL, url: "arn:aws:s3:us-west-2:123456789012:accesspoint/myap/ap/key.ign", want: content, wantRegion: "us-west-2"},
		{name: "instance without a role: anonymous", imds: noRole.URL, url: "s3://flint-bucket/dir/config.ign", want: content, wantHead: true},
		{name: "not on EC2: anonymous", imds: closedEndpoint, url: "s3://flint-bucket/dir/config.ign", want: content, wantHead: true},
		// The AWS SDK Ignition uses falls back to IMDSv1 when the token
		// is refused.
		{name: "IMDSv1 only: instance credentials without a token", imds: v1.URL, platform: "aws", url: "s3://flint-bucket/dir/config.ign", want: content, wantRegion: "eu-central-1", wantHead: true},
		// Ignition asks the instance metadata service on aws only
		// (coreos/ignition internal/providers/aws/aws.go).
		{name: "not aws: no instance metadata request", imds: v1.URL, platform: "gcp", url: "s3://flint-bucket/dir/config.ign", want: content, wantHead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s3 := newFakeS3(t, "eu-central-1", objects)
			defer s3.Close()
			f, _ := newFetcher(t, resource.Options{IMDSEndpoint: tt.imds, S3Endpoint: s3.URL, Platform: tt.platform})
			before := v1Hits.Load()
			got, err := f.FetchConfig(context.Background(), withHash(res(tt.url), sha512Of(tt.want)))
			if n := v1Hits.Load() - before; tt.platform == "gcp" && n != 0 {
				t.Errorf("%d instance metadata requests on gcp, want none", n)
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("FetchConfig(%s) = %q, %v; want %q", tt.url, got, err, tt.want)
			}
			req := s3.lastGet()
			auth := req.Header.Get("Authorization")
			if tt.wantRegion == "" {
				if auth != "" || req.Header.Get("X-Amz-Security-Token") != "" {
					t.Errorf("anonymous request carries credentials: %v", req.Header)
				}
			} else {
				m := authRE.FindStringSubmatch(auth)
				if m == nil || m[1] != "ASIATESTKEY" || m[3] != tt.wantRegion {
					t.Errorf("Authorization = %q, want the instance key signed for %s", auth, tt.wantRegion)
				} else if m[4] != "host;x-amz-content-sha256;x-amz-date;x-amz-security-token" {
					t.Errorf("SignedHeaders = %s", m[4])
				}
				if req.Header.Get("X-Amz-Security-Token") != "session-token" {
					t.Errorf("X-Amz-Security-Token = %q, want the role's session token", req.Header.Get("X-Amz-Security-Token"))
				}
			}
			if (s3.heads > 0) != tt.wantHead {
				t.Errorf("region lookups = %d, want some: %v", s3.heads, tt.wantHead)
			}
		})
	}

	t.Run("local clock an hour behind S3's", func(t *testing.T) {
		s3 := newFakeS3(t, "eu-central-1", objects)
		defer s3.Close()
		s3.ahead = time.Hour
		f, logs := newFetcher(t, resource.Options{IMDSEndpoint: imds.URL, S3Endpoint: s3.URL})
		got, err := f.FetchConfig(context.Background(), res("s3://flint-bucket/dir/config.ign"))
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("FetchConfig = %q, %v; want the object after signing with S3's time", got, err)
		}
		if !strings.Contains(logs.String(), "clock") {
			t.Errorf("the clock correction was not logged")
		}
	})
	t.Run("compression refused", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{IMDSEndpoint: imds.URL})
		if err := f.Fetch(context.Background(), withGzip(res("s3://flint-bucket/dir/config.ign")), io.Discard); !errors.Is(err, resource.ErrCompressionUnsupported) {
			t.Errorf("Fetch of a gzip s3 object = %v, want ErrCompressionUnsupported", err)
		}
	})
	t.Run("missing object", func(t *testing.T) {
		s3 := newFakeS3(t, "eu-central-1", objects)
		defer s3.Close()
		f, _ := newFetcher(t, resource.Options{IMDSEndpoint: imds.URL, S3Endpoint: s3.URL})
		if err := f.Fetch(context.Background(), res("s3://flint-bucket/nope"), io.Discard); !errors.Is(err, resource.ErrNotFound) {
			t.Errorf("Fetch of a missing object = %v, want ErrNotFound", err)
		}
	})
	t.Run("malformed ARN", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{IMDSEndpoint: imds.URL})
		if err := f.Fetch(context.Background(), res("arn:aws:s3:::bucket-without-key"), io.Discard); err == nil {
			t.Error("Fetch of an ARN without key succeeded")
		}
	})
}

func TestGS(t *testing.T) {
	content := []byte(`{"ignition":{"version":"3.6.0"}}`)
	metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "missing Metadata-Flavor", http.StatusForbidden)
			return
		}
		if r.URL.Path != "/computeMetadata/v1/instance/service-accounts/default/token" ||
			r.URL.Query().Get("scopes") != "https://www.googleapis.com/auth/devstorage.read_only" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		io.WriteString(w, `{"access_token":"gce-token","expires_in":3599,"token_type":"Bearer"}`)
	}))
	defer metadata.Close()
	var mu sync.Mutex
	var lastAuth string
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastAuth = r.Header.Get("Authorization")
		mu.Unlock()
		if r.URL.EscapedPath() != "/storage/v1/b/flint-bucket/o/dir%2Fsub%2Fconfig.ign" || r.URL.Query().Get("alt") != "media" {
			t.Errorf("storage request %s, want the object's escaped name and alt=media", r.URL.RequestURI())
			http.NotFound(w, r)
			return
		}
		w.Write(content)
	}))
	defer storage.Close()

	for _, tt := range []struct {
		name, metadata, wantAuth string
	}{
		{"with the service account's token", metadata.URL, "Bearer gce-token"},
		{"anonymous without a metadata server", closedEndpoint, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newFetcher(t, resource.Options{GCEMetadataEndpoint: tt.metadata, GCSEndpoint: storage.URL})
			got, err := f.FetchConfig(context.Background(), withHash(res("gs://flint-bucket/dir/sub/config.ign"), sha512Of(content)))
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("FetchConfig = %q, %v", got, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if lastAuth != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", lastAuth, tt.wantAuth)
			}
		})
	}
}

func TestNetworkErrorsDoNotInventRedirects(t *testing.T) {
	// s3 and gs URLs are fetched from another URL than they read, and the
	// metadata services are asked without any redirect: none of that is
	// a redirect, and an error saying so sends the operator hunting for
	// one.
	f, logs := newFetcher(t, resource.Options{})
	f.SetTotalTimeout(100 * time.Millisecond)
	for _, u := range []string{"gs://bucket/object", "s3://bucket/key"} {
		err := f.Fetch(context.Background(), res(u), io.Discard)
		if err == nil || strings.Contains(err.Error(), "redirected") {
			t.Errorf("Fetch(%s) from a closed port = %v, want a connection error without a redirect", u, err)
		}
	}
	if strings.Contains(logs.String(), "redirected") {
		t.Errorf("log speaks of a redirect where there was none:\n%s", logs)
	}

	srv := httptest.NewServer(http.RedirectHandler(closedEndpoint+"/moved", http.StatusFound))
	defer srv.Close()
	err := f.Fetch(context.Background(), res(srv.URL+"/x"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "redirected to "+closedEndpoint+"/moved") {
		t.Errorf("Fetch through a redirect to a closed port = %v, want the redirect's target named", err)
	}
}
