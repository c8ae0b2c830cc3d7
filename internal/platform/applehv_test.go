package platform

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/mdlayher/vsock"
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
// up with the context), never hang or succeed, and its error must show it
// dialed the host's config port: vsock, context ID 2, port 1024.
func TestAppleHVRealDial(t *testing.T) {
	const limit = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	conn, err := dialAppleHVHost(ctx)
	elapsed := time.Since(start)
	if err == nil {
		conn.Close()
		t.Skip("something listens on vsock cid 2 port 1024 here")
	}
	t.Logf("dial vsock host: %v (after %v)", err, elapsed)
	// A dial that ignores its context would run past the deadline; the
	// slack is for a loaded machine, far below a hang.
	if elapsed > limit+2*time.Second {
		t.Errorf("dialAppleHVHost() returned after %v, want it to give up with its %v context", elapsed, limit)
	}
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Fatalf("dialAppleHVHost() error = %#v, want a *net.OpError", err)
	}
	addr, ok := op.Addr.(*vsock.Addr)
	if op.Op != "dial" || op.Net != "vsock" || !ok || addr.ContextID != vsock.Host || addr.Port != appleHVPort {
		t.Errorf("dialAppleHVHost() = %s %s to %v, want dial vsock to cid %d port %d", op.Op, op.Net, op.Addr, vsock.Host, appleHVPort)
	}
	// On Linux the cause is the kernel's (no vsock transport, a reset
	// from the host, a refusal) or the context's; elsewhere vsock is
	// not implemented at all.
	var errno syscall.Errno
	if runtime.GOOS == "linux" && !errors.As(err, &errno) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dialAppleHVHost() error = %v, want a system call's error or the context's deadline", err)
	}
}
