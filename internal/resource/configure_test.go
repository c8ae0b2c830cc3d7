package resource_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// quietTLSServer is an httptest TLS server that does not log the
// handshake failures the tests provoke.
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func dataURL(b []byte) string {
	return "data:;base64," + base64.StdEncoding.EncodeToString(b)
}

func TestCertificateAuthorities(t *testing.T) {
	tlsSrv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure")
	}))
	defer tlsSrv.Close()
	pemBytes := certPEM(tlsSrv)
	var caFetches counter
	caSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caFetches.next()
		w.Write(pemBytes)
	}))
	defer caSrv.Close()
	ctx := context.Background()

	withCAs := func(cas ...config.Resource) config.Ignition {
		var ign config.Ignition
		ign.Security.TLS.CertificateAuthorities = cas
		return ign
	}
	fetchOK := func(t *testing.T, f *resource.Fetcher) {
		t.Helper()
		got, err := f.FetchConfig(ctx, res(tlsSrv.URL))
		if err != nil || string(got) != "secure" {
			t.Errorf("FetchConfig(%s) = %q, %v; want it trusted", tlsSrv.URL, got, err)
		}
	}

	t.Run("CA as a data URL", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		if err := f.Configure(ctx, withCAs(res(dataURL(pemBytes)))); err != nil {
			t.Fatalf("Configure = %v", err)
		}
		fetchOK(t, f)
		// A later config without the CA stops trusting it.
		if err := f.Configure(ctx, config.Ignition{}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.FetchConfig(ctx, res(tlsSrv.URL)); err == nil {
			t.Error("server still trusted after Configure without CAs")
		}
	})
	t.Run("remote CA with its hash, fetched once", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		ca := withHash(res(caSrv.URL+"/ca.pem"), sha512Of(pemBytes))
		before := caFetches.get()
		for range 2 {
			if err := f.Configure(ctx, withCAs(ca)); err != nil {
				t.Fatalf("Configure = %v", err)
			}
		}
		fetchOK(t, f)
		if n := caFetches.get() - before; n != 1 {
			t.Errorf("CA bundle fetched %d times, want 1", n)
		}
	})
	t.Run("CA with a wrong hash", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		err := f.Configure(ctx, withCAs(withHash(res(caSrv.URL+"/ca.pem"), sha512Of([]byte("other")))))
		var he *resource.HashMismatchError
		if !errors.As(err, &he) {
			t.Errorf("Configure = %v, want *HashMismatchError", err)
		}
	})
	t.Run("bundle without certificates", func(t *testing.T) {
		f, _ := newFetcher(t, resource.Options{})
		err := f.Configure(ctx, withCAs(res("data:,not%20a%20certificate")))
		if err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
			t.Errorf("Configure = %v, want a no-certificate error", err)
		}
	})
	t.Run("TLS below 1.2 refused", func(t *testing.T) {
		old := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer old.Close()
		old.TLS.MaxVersion = tls.VersionTLS11
		f, _ := newFetcher(t, resource.Options{})
		if err := f.Configure(ctx, withCAs(res(dataURL(certPEM(old))))); err != nil {
			t.Fatal(err)
		}
		if _, err := f.FetchConfig(ctx, res(old.URL)); err == nil {
			t.Error("FetchConfig from a TLS 1.1 server succeeded")
		}
	})
}

// recordingProxy is an HTTP proxy that answers plain requests itself and
// tunnels CONNECT to tunnelTo.
type recordingProxy struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // "GET http://host/path", "CONNECT host:443"
}

func newRecordingProxy(t *testing.T, tunnelTo string) *recordingProxy {
	p := &recordingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, r.Method+" "+r.RequestURI)
		p.mu.Unlock()
		if r.Method != http.MethodConnect {
			io.WriteString(w, "via proxy: "+r.URL.String())
			return
		}
		dst, err := net.Dial("tcp", tunnelTo)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn := hijack(t, w)
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() {
			io.Copy(dst, conn)
			dst.Close()
		}()
		io.Copy(conn, dst)
		conn.Close()
	}))
	return p
}

func (p *recordingProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func TestProxy(t *testing.T) {
	tlsSrv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tunnelled to "+r.Host)
	}))
	defer tlsSrv.Close()
	direct := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "direct")
	}))
	defer direct.Close()
	proxy := newRecordingProxy(t, tlsSrv.Listener.Addr().String())
	defer proxy.Close()

	// Names that are not on the proxy's way resolve to the local servers;
	// nothing ever leaves the machine.
	var dialer net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch addr {
		case "direct.test:80", "sub.direct.test:80":
			addr = direct.Listener.Addr().String()
		case proxy.Listener.Addr().String():
		default:
			t.Errorf("dialled %s, which is neither the proxy nor a direct host", addr)
			return nil, errors.New("unexpected dial")
		}
		return dialer.DialContext(ctx, network, addr)
	}
	f, _ := newFetcher(t, resource.Options{DialContext: dial})
	var ign config.Ignition
	ign.Proxy.HTTPProxy = &proxy.URL
	ign.Proxy.HTTPSProxy = &proxy.URL
	ign.Proxy.NoProxy = []string{"direct.test"}
	ign.Security.TLS.CertificateAuthorities = []config.Resource{res(dataURL(certPEM(tlsSrv)))}
	ctx := context.Background()
	if err := f.Configure(ctx, ign); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		url, want, proxied string
	}{
		{"http://origin.test/config.ign", "via proxy: http://origin.test/config.ign", "GET http://origin.test/config.ign"},
		// httptest's certificate is for example.com.
		{"https://example.com/config.ign", "tunnelled to example.com", "CONNECT example.com:443"},
		{"http://direct.test/config.ign", "direct", ""},
		{"http://sub.direct.test/config.ign", "direct", ""},
	}
	for _, tt := range tests {
		before := len(proxy.seen())
		got, err := f.FetchConfig(ctx, res(tt.url))
		if err != nil || string(got) != tt.want {
			t.Errorf("FetchConfig(%s) = %q, %v; want %q", tt.url, got, err, tt.want)
			continue
		}
		seen := proxy.seen()[before:]
		switch {
		case tt.proxied == "" && len(seen) != 0:
			t.Errorf("FetchConfig(%s) went through the proxy (%q) despite noProxy", tt.url, seen)
		case tt.proxied != "" && (len(seen) != 1 || seen[0] != tt.proxied):
			t.Errorf("proxy saw %q for %s, want %q", seen, tt.url, tt.proxied)
		}
	}
}
