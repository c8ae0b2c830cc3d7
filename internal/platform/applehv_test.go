package platform

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAppleHV(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		modprobe error
		driver   bool // /sys/devices/virtual/misc/vsock is there: no modprobe
		dialErr  error
		want     string
		wantErr  error
		anyErr   bool
	}{
		{name: "config", status: http.StatusOK, body: localUserData, want: localUserData},
		{name: "empty answer", status: http.StatusOK, wantErr: ErrNoConfig},
		{name: "not found", status: http.StatusNotFound, body: "404 page not found", anyErr: true},
		{name: "server error", status: http.StatusInternalServerError, anyErr: true},
		{name: "no vsock listener", dialErr: errFakeDial, wantErr: errFakeDial},
		{name: "modprobe fails", modprobe: errFakeModprobe, wantErr: errFakeModprobe},
		// As Ignition (coreos/ignition internal/providers/applehv/
		// applehv.go): modprobe only when vsock is not there.
		{name: "vsock there", status: http.StatusOK, body: localUserData, driver: true, modprobe: errFakeModprobe, want: localUserData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := make(chan *http.Request, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests <- r
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			r := &argvRunner{fail: map[string]error{"modprobe vsock": tt.modprobe}}
			root := t.TempDir()
			if tt.driver {
				if err := os.MkdirAll(filepath.Join(root, "sys/devices/virtual/misc/vsock"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p := newAppleHV(Env{Root: root, Runner: r, Logger: localTestLogger(t)}).(appleHVProvider)
			p.dial = func(ctx context.Context) (net.Conn, error) {
				if tt.dialErr != nil {
					return nil, tt.dialErr
				}
				var d net.Dialer
				return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
			}
			got, err := p.FetchConfig(context.Background())
			if tt.anyErr {
				if err == nil || errors.Is(err, ErrNoConfig) {
					t.Errorf("applehv FetchConfig() = %q, %v, want a failure", got, err)
				}
			} else {
				checkLocal(t, "applehv", got, err, tt.want, tt.wantErr)
			}
			if tt.driver {
				r.check(t)
			} else {
				r.check(t, []string{"modprobe", "vsock"})
			}
			if tt.status != 0 {
				if len(requests) != 1 {
					t.Fatalf("host got %d requests, want 1", len(requests))
				}
				req := <-requests
				if req.Method != http.MethodGet || req.URL.Path != "/" || req.Header.Get("Accept") != "application/json" {
					t.Errorf("request = %s %s Accept %q, want GET / Accept application/json", req.Method, req.URL.Path, req.Header.Get("Accept"))
				}
			}
		})
	}
}

var errFakeDial = errors.New("connect: connection reset by peer")

// TestAppleHVHostHangs: a host that never answers holds the fetch only as
// long as the context.
func TestAppleHVHostHangs(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p := newAppleHV(Env{Logger: localTestLogger(t)}).(appleHVProvider)
	p.dial = func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.FetchConfig(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("applehv FetchConfig() = %v, want context.DeadlineExceeded", err)
	}
}

// TestAppleHVRealDial dials the real vsock host address. Outside an Apple
// Virtualization guest nothing listens there: the dial must fail (or give
// up with the context), never hang or succeed.
func TestAppleHVRealDial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := dialAppleHVHost(ctx)
	if err == nil {
		conn.Close()
		t.Skip("something listens on vsock cid 2 port 1024 here")
	}
	t.Logf("dial vsock host: %v", err)
}
