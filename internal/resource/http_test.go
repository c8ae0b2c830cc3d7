package resource_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

func TestFetchRetries503(t *testing.T) {
	body := []byte(`{"ignition":{"version":"3.6.0"}}`)
	var n counter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.next() <= 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()

	f, logs := newFetcher(t, resource.Options{})
	var buf bytes.Buffer
	if err := f.Fetch(context.Background(), withHash(res(srv.URL+"/c.ign"), sha512Of(body)), &buf); err != nil {
		t.Fatalf("Fetch = %v", err)
	}
	if !bytes.Equal(buf.Bytes(), body) {
		t.Errorf("Fetch wrote %q, want %q", buf.Bytes(), body)
	}
	if n.get() != 4 {
		t.Errorf("server saw %d requests, want 4", n.get())
	}
	if got := strings.Count(logs.String(), "retrying"); got != 3 {
		t.Errorf("log has %d retry lines, want 3:\n%s", got, logs)
	}
	if !strings.Contains(logs.String(), "503") {
		t.Errorf("retry log does not name the status:\n%s", logs)
	}
}

// hijack takes over the connection of a request and answers by hand.
func hijack(t *testing.T, w http.ResponseWriter) *net.TCPConn {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		panic(http.ErrAbortHandler)
	}
	return conn.(*net.TCPConn)
}

// reset closes conn with a TCP RST instead of a FIN.
func reset(c *net.TCPConn) {
	c.SetLinger(0)
	c.Close()
}

func TestConnectionResetMidBody(t *testing.T) {
	full := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	// resetAfter says how much body the n-th request gets before its
	// connection is reset; -1 sends everything.
	serve := func(resetAfter func(n int) int) *httptest.Server {
		var n counter
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cut := resetAfter(n.next())
			if cut < 0 {
				w.Write(full)
				return
			}
			c := hijack(t, w)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(full))
			c.Write(full[:cut])
			time.Sleep(100 * time.Millisecond) // let the client write what it got
			reset(c)
		}))
	}

	t.Run("Fetch after data was written fails clearly", func(t *testing.T) {
		srv := serve(func(int) int { return 1000 })
		defer srv.Close()
		f, _ := newFetcher(t, resource.Options{})
		var buf bytes.Buffer
		err := f.Fetch(context.Background(), res(srv.URL+"/file"), &buf)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("Fetch = %v, want ECONNRESET", err)
		}
		if !strings.Contains(err.Error(), "not retried") || !strings.Contains(err.Error(), "1000 bytes") {
			t.Errorf("Fetch error %q does not say the written data stopped the retry", err)
		}
	})
	t.Run("Fetch before data was written retries", func(t *testing.T) {
		srv := serve(func(n int) int {
			if n == 1 {
				return 0
			}
			return -1
		})
		defer srv.Close()
		f, logs := newFetcher(t, resource.Options{})
		var buf bytes.Buffer
		if err := f.Fetch(context.Background(), withHash(res(srv.URL+"/file"), sha512Of(full)), &buf); err != nil {
			t.Fatalf("Fetch = %v", err)
		}
		if !bytes.Equal(buf.Bytes(), full) {
			t.Errorf("Fetch wrote %d bytes, want %d", buf.Len(), len(full))
		}
		if !strings.Contains(logs.String(), "retrying") {
			t.Errorf("no retry logged:\n%s", logs)
		}
	})
	t.Run("FetchConfig starts over", func(t *testing.T) {
		srv := serve(func(n int) int {
			if n <= 2 {
				return 5000
			}
			return -1
		})
		defer srv.Close()
		f, _ := newFetcher(t, resource.Options{})
		got, err := f.FetchConfig(context.Background(), withHash(res(srv.URL+"/c.ign"), sha512Of(full)))
		if err != nil {
			t.Fatalf("FetchConfig = %v", err)
		}
		if !bytes.Equal(got, full) {
			t.Errorf("FetchConfig = %d bytes, want %d (no leftovers of the failed attempts)", len(got), len(full))
		}
	})
}

func TestTruncatedBody(t *testing.T) {
	full := bytes.Repeat([]byte("x"), 1000)
	var n counter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		if r.URL.Path == "/always-short" || n.next() == 1 {
			w.Write(full[:500]) // the server closes the connection: too short
			return
		}
		w.Write(full)
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})

	var buf bytes.Buffer
	err := f.Fetch(context.Background(), res(srv.URL+"/always-short"), &buf)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Fetch of a truncated body = %v, want io.ErrUnexpectedEOF", err)
	}
	got, err := f.FetchConfig(context.Background(), res(srv.URL+"/short-once"))
	if err != nil || !bytes.Equal(got, full) {
		t.Errorf("FetchConfig after one truncated answer = %d bytes, %v; want %d bytes", len(got), err, len(full))
	}
}

func TestTotalTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case "/busy":
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()

	t.Run("slow server", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		f.SetTotalTimeout(300 * time.Millisecond)
		start := time.Now()
		err := f.Fetch(context.Background(), res(srv.URL+"/slow"), io.Discard)
		if !errors.Is(err, resource.ErrTimeout) {
			t.Errorf("Fetch = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Fetch gave up after %v, want about 300ms", d)
		}
	})
	t.Run("server busy until the end", func(t *testing.T) {
		f, logs := newFetcher(t, resource.Options{})
		f.SetTotalTimeout(200 * time.Millisecond)
		err := f.Fetch(context.Background(), res(srv.URL+"/busy"), io.Discard)
		var se *resource.StatusError
		if !errors.Is(err, resource.ErrTimeout) || !errors.As(err, &se) || se.Status != http.StatusBadGateway {
			t.Errorf("Fetch = %v, want ErrTimeout wrapping the last 502", err)
		}
		if !strings.Contains(logs.String(), "retrying") {
			t.Errorf("retries were not logged")
		}
	})
	t.Run("httpTotal from the config", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		one := 1
		var ign config.Ignition
		ign.Timeouts.HTTPTotal = &one
		if err := f.Configure(context.Background(), ign); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := f.Fetch(context.Background(), res(srv.URL+"/slow"), io.Discard)
		if !errors.Is(err, resource.ErrTimeout) || time.Since(start) > 5*time.Second {
			t.Errorf("Fetch = %v after %v, want ErrTimeout after 1s", err, time.Since(start))
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		f.SetTotalTimeout(200 * time.Millisecond)
		err := f.Fetch(context.Background(), res(closedEndpoint+"/x"), io.Discard)
		if !errors.Is(err, resource.ErrTimeout) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Fetch = %v, want ErrTimeout wrapping ECONNREFUSED", err)
		}
	})
	t.Run("time runs out while the body streams", func(t *testing.T) {
		stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, strings.Repeat("x", 100))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		defer stall.Close()
		f, _ := newFetcher(t, resource.Options{})
		f.SetTotalTimeout(300 * time.Millisecond)
		var buf bytes.Buffer
		err := f.Fetch(context.Background(), res(stall.URL+"/x"), &buf)
		if !errors.Is(err, resource.ErrTimeout) || buf.Len() != 100 ||
			!strings.Contains(err.Error(), "100 bytes") || strings.Contains(err.Error(), "waiting for an answer") {
			t.Errorf("Fetch = %v with %d bytes written, want ErrTimeout saying the 100 bytes were written", err, buf.Len())
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := f.Fetch(ctx, res(srv.URL+"/slow"), io.Discard)
		if errors.Is(err, resource.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Fetch with the caller's deadline = %v, want context.DeadlineExceeded, not ErrTimeout", err)
		}
	})
}

func TestResponseHeaderTimeout(t *testing.T) {
	var n counter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.next() == 1 {
			<-r.Context().Done() // never answers
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})
	one := 1
	var ign config.Ignition
	ign.Timeouts.HTTPResponseHeaders = &one
	if err := f.Configure(context.Background(), ign); err != nil {
		t.Fatal(err)
	}
	got, err := f.FetchConfig(context.Background(), res(srv.URL))
	if err != nil || string(got) != "ok" {
		t.Errorf("FetchConfig = %q, %v; want the second attempt's answer", got, err)
	}
}

func TestStatusCodes(t *testing.T) {
	var n counter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.next()
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(code)
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})
	for _, code := range []int{403, 401, 400, 410} {
		before := n.get()
		err := f.Fetch(context.Background(), res(fmt.Sprintf("%s/%d?secret=x", srv.URL, code)), io.Discard)
		var se *resource.StatusError
		if !errors.As(err, &se) || se.Status != code {
			t.Errorf("Fetch of a %d = %v, want *StatusError %d", code, err, code)
			continue
		}
		if n.get()-before != 1 {
			t.Errorf("a %d was retried (%d requests)", code, n.get()-before)
		}
		if !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), strconv.Itoa(code)) || strings.Contains(err.Error(), "secret") {
			t.Errorf("error %q should name the redacted URL and the status", err)
		}
	}
	before := n.get()
	err := f.Fetch(context.Background(), res(srv.URL+"/404"), io.Discard)
	if !errors.Is(err, resource.ErrNotFound) || n.get()-before != 1 {
		t.Errorf("Fetch of a 404 = %v after %d requests, want ErrNotFound at once", err, n.get()-before)
	}
	if err := f.Fetch(context.Background(), res(srv.URL+"/204"), io.Discard); err != nil {
		t.Errorf("Fetch of a 204 = %v, want success", err)
	}
}

func TestHashAndCompression(t *testing.T) {
	plain := bytes.Repeat([]byte("flint "), 10000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/plain":
			w.Write(plain)
		case "/gz":
			w.Write(gz.Bytes())
		case "/corrupt.gz":
			b := bytes.Clone(gz.Bytes())
			b[len(b)/2] ^= 0xff
			w.Write(b)
		}
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})
	wrong := sha512Of([]byte("something else"))

	tests := []struct {
		name    string
		res     func() config.Resource
		want    []byte
		wantErr func(error) bool
	}{
		{name: "sha512", res: func() config.Resource { return withHash(res(srv.URL+"/plain"), sha512Of(plain)) }, want: plain},
		{name: "sha256", res: func() config.Resource { return withHash(res(srv.URL+"/plain"), sha256Of(plain)) }, want: plain},
		{name: "gzip and hash of the decompressed data", res: func() config.Resource { return withGzip(withHash(res(srv.URL+"/gz"), sha512Of(plain))) }, want: plain},
		{name: "gzip without hash", res: func() config.Resource { return withGzip(res(srv.URL + "/gz")) }, want: plain},
		{name: "corrupt gzip", res: func() config.Resource { return withGzip(res(srv.URL + "/corrupt.gz")) }, wantErr: func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "decompressing")
		}},
		{name: "hash of the compressed data is wrong", res: func() config.Resource { return withGzip(withHash(res(srv.URL+"/gz"), sha512Of(gz.Bytes()))) }, wantErr: func(err error) bool {
			var he *resource.HashMismatchError
			return errors.As(err, &he)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := f.Fetch(context.Background(), tt.res(), &buf)
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Errorf("Fetch = %v, want a different error", err)
				}
				return
			}
			if err != nil || !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("Fetch = %d bytes, %v; want %d bytes", buf.Len(), err, len(tt.want))
			}
		})
	}

	t.Run("mismatch names URL and both hashes", func(t *testing.T) {
		u := strings.Replace(srv.URL, "http://", "http://user:pass@", 1) + "/plain?token=secret"
		err := f.Fetch(context.Background(), withHash(res(u), wrong), io.Discard)
		var he *resource.HashMismatchError
		if !errors.As(err, &he) {
			t.Fatalf("Fetch = %v, want *HashMismatchError", err)
		}
		if he.Expected != wrong || he.Actual != sha512Of(plain) || he.URL != srv.URL+"/plain" {
			t.Errorf("HashMismatchError = %+v, want URL %s, expected %s, actual %s", he, srv.URL+"/plain", wrong, sha512Of(plain))
		}
		for _, secret := range []string{"pass", "secret", "user"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows %q", err, secret)
			}
		}
	})
}

func TestFetchConfigTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for range resource.MaxConfigSize>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})
	_, err := f.FetchConfig(context.Background(), res(srv.URL))
	if !errors.Is(err, resource.ErrTooLarge) || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("FetchConfig of 65 MiB = %v, want ErrTooLarge naming the limit", err)
	}
}

// TestConfigLimitStopsTheTransfer serves one byte more than the config
// limit and then holds the connection open: the fetch must fail at that
// byte, naming the limit, without waiting for the rest of the body (the
// stall) or asking again. Exactly the limit is fine; files (Fetch) are not
// configs and have no such bound.
func TestConfigLimitStopsTheTransfer(t *testing.T) {
	const limit = 1000
	var requests atomic.Int32
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		// The length announced is the whole body's; the server sends
		// one byte past the limit and waits.
		w.Header().Set("Content-Length", "1000000")
		w.Write(bytes.Repeat([]byte("x"), limit+1))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	defer stall.Close()
	sized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.Write(bytes.Repeat([]byte("x"), n))
	}))
	defer sized.Close()
	f, _ := newFetcher(t, resource.Options{IdleTimeout: 10 * time.Second})
	f.SetConfigLimit(limit)

	for _, get := range []struct {
		name string
		do   func(url string) ([]byte, error)
	}{
		{"FetchConfig", func(url string) ([]byte, error) { return f.FetchConfig(t.Context(), res(url)) }},
		{"Get", func(url string) ([]byte, error) { return f.Get(t.Context(), resource.Request{URL: url}) }},
	} {
		requests.Store(0)
		start := time.Now()
		_, err := get.do(stall.URL)
		if !errors.Is(err, resource.ErrTooLarge) || !strings.Contains(err.Error(), "1000 bytes") {
			t.Errorf("%s of %d bytes with a limit of %d = %v, want ErrTooLarge naming the limit", get.name, limit+1, limit, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %v: it read on past the limit", get.name, d)
		}
		if n := requests.Load(); n != 1 {
			t.Errorf("%s asked %d times, want once: a config over the limit is not retried", get.name, n)
		}
		if b, err := get.do(sized.URL + "/1000"); err != nil || len(b) != limit {
			t.Errorf("%s of exactly the limit = %d bytes, %v; want %d bytes", get.name, len(b), err, limit)
		}
	}
	var file bytes.Buffer
	if err := f.Fetch(t.Context(), res(sized.URL+"/5000"), &file); err != nil || file.Len() != 5000 {
		t.Errorf("Fetch of a 5000-byte file = %d bytes, %v; want 5000: files are not configs", file.Len(), err)
	}
}

func TestDefaultHeadersAndRedirects(t *testing.T) {
	other := make(chan http.Header, 10)
	otherSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other <- r.Header.Clone()
		io.WriteString(w, "elsewhere")
	}))
	defer otherSrv.Close()
	same := make(chan http.Header, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, otherSrv.URL+"/target", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/target", http.StatusMovedPermanently)
		case "/target":
			same <- r.Header.Clone()
			io.WriteString(w, "here")
		}
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{Version: "1.2.3"})
	withHeaders := func(u string) config.Resource {
		r := withHeader(res(u), "Authorization", "Bearer secret")
		r = withHeader(r, "X-Custom", "custom")
		return withHeader(r, "Accept", "text/plain")
	}

	t.Run("defaults", func(t *testing.T) {
		if _, err := f.FetchConfig(context.Background(), res(srv.URL+"/here")); err != nil {
			t.Fatal(err)
		}
		h := <-same
		want := map[string]string{
			"Accept":          "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1",
			"Accept-Encoding": "identity",
			// Ignition's compatibility token first: config servers pick
			// what to serve by it (OpenShift's Machine Config Server).
			"User-Agent": "Ignition/2.26.0 flint/1.2.3",
		}
		for k, v := range want {
			if h.Get(k) != v {
				t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
			}
		}
	})
	// Ignition drops the config's headers on every redirect
	// (coreos/ignition internal/resource/url.go CheckRedirect; its
	// tests/servers/servers.go redirectedHeaderCheck checks it), the same
	// host included.
	t.Run("same host drops config headers, keeps defaults", func(t *testing.T) {
		got, err := f.FetchConfig(context.Background(), withHeaders(srv.URL+"/here"))
		if err != nil || string(got) != "here" {
			t.Fatalf("FetchConfig = %q, %v", got, err)
		}
		h := <-same
		if h.Get("Authorization") != "" || h.Get("X-Custom") != "" {
			t.Errorf("config headers kept after a same-host redirect: %v", h)
		}
		if h.Get("Accept") != "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1" || h.Get("User-Agent") != "Ignition/2.26.0 flint/1.2.3" {
			t.Errorf("flint's defaults missing after a same-host redirect: %v", h)
		}
	})
	t.Run("other host drops config headers, keeps defaults", func(t *testing.T) {
		got, err := f.FetchConfig(context.Background(), withHeaders(srv.URL+"/away"))
		if err != nil || string(got) != "elsewhere" {
			t.Fatalf("FetchConfig = %q, %v", got, err)
		}
		h := <-other
		if h.Get("Authorization") != "" || h.Get("X-Custom") != "" {
			t.Errorf("config headers leaked to another host: %v", h)
		}
		if h.Get("Accept") != "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1" || h.Get("User-Agent") != "Ignition/2.26.0 flint/1.2.3" {
			t.Errorf("flint's defaults missing after a redirect: %v", h)
		}
	})
}

func TestRedirectToHTTPSDropsHeaders(t *testing.T) {
	// http://example.com and https://example.com are mapped to two local
	// servers; httptest's certificate is valid for example.com.
	auth := make(chan string, 1)
	tlsSrv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		io.WriteString(w, "upgraded")
	}))
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://example.com/target", http.StatusMovedPermanently)
	}))
	defer plain.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch addr {
		case "example.com:80":
			addr = plain.Listener.Addr().String()
		case "example.com:443":
			addr = tlsSrv.Listener.Addr().String()
		default:
			return nil, fmt.Errorf("test dialled %s", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	f, _ := newFetcher(t, resource.Options{DialContext: dial})
	var ign config.Ignition
	ign.Security.TLS.CertificateAuthorities = []config.Resource{res(dataURL(certPEM(tlsSrv)))}
	if err := f.Configure(context.Background(), ign); err != nil {
		t.Fatal(err)
	}
	got, err := f.FetchConfig(context.Background(), withHeader(res("http://example.com/x"), "Authorization", "Bearer secret"))
	if err != nil || string(got) != "upgraded" {
		t.Fatalf("FetchConfig = %q, %v", got, err)
	}
	if a := <-auth; a != "" {
		t.Errorf("Authorization after a redirect from http to https on the same host = %q, want none, as Ignition", a)
	}
}

func TestGet(t *testing.T) {
	var n counter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/post":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s %s", r.Method, b, r.Header.Get("Metadata"), r.Header.Get("Accept"))
		case "/flaky-404":
			if n.next() <= 2 {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, "appeared")
		case "/port":
			_, port, _ := net.SplitHostPort(r.RemoteAddr)
			io.WriteString(w, port)
		}
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})
	ctx := context.Background()

	got, err := f.Get(ctx, resource.Request{URL: srv.URL + "/post", Method: http.MethodPost, Body: []byte("hello"),
		Header: http.Header{"Metadata": {"true"}, "Accept": {"application/json"}}})
	if err != nil || string(got) != "POST hello true application/json" {
		t.Errorf("Get(POST) = %q, %v", got, err)
	}
	if _, err := f.Get(ctx, resource.Request{URL: srv.URL + "/flaky-404"}); !errors.Is(err, resource.ErrNotFound) {
		t.Errorf("Get of a 404 = %v, want ErrNotFound", err)
	}
	got, err = f.Get(ctx, resource.Request{URL: srv.URL + "/flaky-404", RetryStatus: []int{404}})
	if err != nil || string(got) != "appeared" {
		t.Errorf("Get with RetryStatus 404 = %q, %v", got, err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for i := range 2 { // the second connection reuses the port
		got, err = f.Get(ctx, resource.Request{URL: srv.URL + "/port", LocalPort: port})
		if err != nil || string(got) != strconv.Itoa(port) {
			t.Errorf("Get %d with LocalPort %d came from port %q, %v", i, port, got, err)
		}
	}
	if _, err := f.Get(ctx, resource.Request{URL: "ftp://example.com/x"}); !errors.Is(err, resource.ErrSchemeUnsupported) {
		t.Errorf("Get(ftp) = %v, want ErrSchemeUnsupported", err)
	}
}

func TestCertificateErrorNotRetried(t *testing.T) {
	srv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{})
	f.SetTotalTimeout(10 * time.Second)
	start := time.Now()
	err := f.Fetch(context.Background(), res(srv.URL), io.Discard)
	if err == nil || errors.Is(err, resource.ErrTimeout) || time.Since(start) > 2*time.Second {
		t.Errorf("Fetch from an untrusted server = %v after %v, want a certificate error at once", err, time.Since(start))
	}
}

// TestConnectionsKeptPerHost: concurrent fetches from one server keep
// their connections for the next ones (HTTP/1.1 keep-alive), up to
// IdleConnsPerHost of them, instead of closing all but two and dialling
// again for every file.
func TestConnectionsKeptPerHost(t *testing.T) {
	const n = 16
	var conns counter
	// Every request of a batch waits until the whole batch has arrived:
	// n connections are open at once.
	var arrived counter
	release := []chan struct{}{make(chan struct{}), make(chan struct{})}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := arrived.next()
		b := release[min((k-1)/n, 1)]
		if k%n == 0 {
			close(b)
		}
		<-b
		io.WriteString(w, "body")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.next()
		}
	}
	srv.Start()
	defer srv.Close()

	f, _ := newFetcher(t, resource.Options{})
	batch := func() {
		errs := make(chan error, n)
		for i := range n {
			go func() {
				var buf bytes.Buffer
				errs <- f.Fetch(context.Background(), res(fmt.Sprintf("%s/f%d", srv.URL, i)), &buf)
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatalf("Fetch = %v", err)
			}
		}
	}
	batch()
	if got := conns.get(); got != n {
		t.Fatalf("the first %d fetches opened %d connections, want %d", n, got, n)
	}
	// Connections go back to the pool just after their bodies end.
	time.Sleep(100 * time.Millisecond)
	batch()
	// Without keep-alive for all of them, 14 of 16 are dialled again.
	if got := conns.get() - n; got > n/2 {
		t.Errorf("the second %d fetches opened %d new connections, want the first batch's reused", n, got)
	}
}
