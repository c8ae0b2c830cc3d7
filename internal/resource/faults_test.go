package resource_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// rewindBuffer is a resource.Rewinder in memory, like the files stage's
// temporary files: it records how often it was rewound.
type rewindBuffer struct {
	b       []byte
	rewinds int
}

func (w *rewindBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *rewindBuffer) Offset() (int64, error) { return int64(len(w.b)), nil }

func (w *rewindBuffer) Rewind(off int64) error {
	if off < 0 || off > int64(len(w.b)) {
		return fmt.Errorf("rewind to %d of %d bytes", off, len(w.b))
	}
	w.b = w.b[:off]
	w.rewinds++
	return nil
}

// The secrets of the URLs the fault cases fetch: no error and no log line
// may show them.
const (
	secretPassword = "pw-SECRET-1"
	secretToken    = "tok-SECRET-2"
	secretLocation = "loc-SECRET-3"
)

// TestServerFaults runs every fault a server can inflict on a transfer
// against the fetcher: what it ends with, how many requests it took, and
// that the URL's credentials and query never show.
func TestServerFaults(t *testing.T) {
	full := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	const idle = 200 * time.Millisecond
	// prefix is what the writer holds before the fetch (an append to an
	// existing file): a rewind must keep it.
	prefix := []byte("existing contents\n")

	sendFull := func(w http.ResponseWriter) { w.Write(full) }
	// cut sends the headers for the whole body, then n bytes of it, and
	// resets the connection.
	cut := func(t *testing.T, w http.ResponseWriter, n int) {
		c := hijack(t, w)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(full))
		c.Write(full[:n])
		time.Sleep(50 * time.Millisecond) // let the client write what it got
		reset(c)
	}
	// stall sends the headers and 100 bytes, then nothing.
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		w.Write(full[:100])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	// short announces the whole body and sends half of it.
	short := func(w http.ResponseWriter) {
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		w.Write(full[:len(full)/2])
	}

	cases := []struct {
		name string
		// serve answers the n-th request (from 1).
		serve func(t *testing.T, n int, w http.ResponseWriter, r *http.Request)
		// headerTimeout and total, when set, are the config's
		// httpResponseHeaders and httpTotal.
		headerTimeout, total int
		hash                 bool
		wantRequests         int
		orMore               bool // wantRequests is a minimum
		// wantErr is nil for success, else what the error wraps.
		wantErr  error
		wantText string // in the error
	}{
		{
			name: "503 then 200",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				sendFull(w)
			},
			hash: true, wantRequests: 2,
		},
		{
			name: "reset midway, then 200",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					cut(t, w, 10000)
					return
				}
				sendFull(w)
			},
			hash: true, wantRequests: 2,
		},
		{
			name: "reset midway for good",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				cut(t, w, 10000)
			},
			wantRequests: 3, wantErr: syscall.ECONNRESET, wantText: "gave up after 3 attempts",
		},
		{
			name: "stall, then 200",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					stall(w, r)
					return
				}
				sendFull(w)
			},
			hash: true, wantRequests: 2,
		},
		{
			name: "stall for good",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				stall(w, r)
			},
			wantRequests: 3, wantErr: resource.ErrStalled, wantText: "no data for 200ms",
		},
		{
			name: "no answer for good",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
			},
			headerTimeout: 1, wantRequests: 3, wantText: "gave up after 3 attempts",
		},
		{
			// With httpTotal a silent server is retried until it runs
			// out, as before: the config chose the bound.
			name: "no answer, with httpTotal",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
			},
			headerTimeout: 1, total: 5, wantRequests: 4, orMore: true, wantErr: resource.ErrTimeout,
		},
		{
			name: "truncated, then 200",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					short(w)
					return
				}
				sendFull(w)
			},
			hash: true, wantRequests: 2,
		},
		{
			name: "Content-Length longer than the body, for good",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				short(w)
			},
			hash: true, wantRequests: 3, wantErr: io.ErrUnexpectedEOF, wantText: "gave up after 3 attempts",
		},
		{
			name: "Content-Length shorter than the body",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(len(full)-1))
				w.Write(full[:len(full)-1])
			},
			hash: true, wantRequests: 1, wantText: "hash verification failed",
		},
		{
			name: "redirect loop",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/file?token="+secretToken, http.StatusFound)
			},
			wantRequests: 10, wantText: "stopped after 10 redirects",
		},
		{
			name: "unparseable Location",
			serve: func(t *testing.T, n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", "http://user:"+secretLocation+"@exa mple.com/?t="+secretLocation)
				w.WriteHeader(http.StatusFound)
			},
			wantRequests: 1, wantErr: resource.ErrBadRedirect,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n counter
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.serve(t, n.next(), w, r)
			}))
			defer srv.Close()
			f, logs := newFetcher(t, resource.Options{IdleTimeout: idle})
			if c.headerTimeout > 0 || c.total > 0 {
				var ign config.Ignition
				if c.headerTimeout > 0 {
					ign.Timeouts.HTTPResponseHeaders = &c.headerTimeout
				}
				if c.total > 0 {
					ign.Timeouts.HTTPTotal = &c.total
				}
				if err := f.Configure(context.Background(), ign); err != nil {
					t.Fatal(err)
				}
			}
			src := strings.Replace(srv.URL, "http://", "http://user:"+secretPassword+"@", 1) + "/file?token=" + secretToken
			r := res(src)
			if c.hash {
				r = withHash(r, sha512Of(full))
			}
			// Every case ends by itself; the deadline only keeps a
			// regression from hanging the test.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			w := &rewindBuffer{b: bytes.Clone(prefix)}
			start := time.Now()
			err := f.Fetch(ctx, r, w)
			took := time.Since(start)

			if c.wantErr == nil && c.wantText == "" {
				if err != nil {
					t.Fatalf("Fetch = %v, want success", err)
				}
				if want := append(bytes.Clone(prefix), full...); !bytes.Equal(w.b, want) {
					t.Errorf("Fetch wrote %d bytes, want the %d of the prefix and the body, nothing of the failed attempts", len(w.b), len(want))
				}
			} else {
				if err == nil {
					t.Fatalf("Fetch succeeded, want an error")
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Errorf("Fetch = %v, want %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantText) {
					t.Errorf("Fetch = %v, want it to say %q", err, c.wantText)
				}
				if ctx.Err() != nil {
					t.Errorf("Fetch ran until the test's deadline (%v): %v", took, err)
				}
				if !strings.Contains(err.Error(), "127.0.0.1") {
					t.Errorf("Fetch = %v, want it to name the source", err)
				}
			}
			if got := n.get(); got != c.wantRequests && !(c.orMore && got > c.wantRequests) {
				t.Errorf("server saw %d requests, want %d", got, c.wantRequests)
			}
			for _, s := range []string{secretPassword, secretToken, secretLocation} {
				if err != nil && strings.Contains(err.Error(), s) {
					t.Errorf("error shows the secret %q: %v", s, err)
				}
				if strings.Contains(logs.String(), s) {
					t.Errorf("log shows the secret %q:\n%s", s, logs)
				}
			}
		})
	}
}

// TestIdleTimeoutBound checks the bound the default relies on: a transfer that
// stalls for good ends, retries included, within 3 idle timeouts and the
// backoffs, not at httpTotal (there is none here).
func TestIdleTimeoutBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	const idle = 300 * time.Millisecond
	f, _ := newFetcher(t, resource.Options{IdleTimeout: idle})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := f.FetchConfig(ctx, res(srv.URL+"/c.ign"))
	took := time.Since(start)
	if !errors.Is(err, resource.ErrStalled) {
		t.Fatalf("FetchConfig = %v, want ErrStalled", err)
	}
	if took < 3*idle || took > 3*idle+2*time.Second {
		t.Errorf("FetchConfig gave up after %v, want about 3 × %v", took, idle)
	}
}
