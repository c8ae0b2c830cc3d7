package resource_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// TestOpen streams bodies through Open: retried by error class and
// bounded by MaxAttempts until the server answers, then read at the
// reader's pace.
func TestOpen(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	var calls counter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.next()
		switch {
		case r.URL.Path == "/missing":
			http.NotFound(w, r)
		case r.URL.Path == "/busy" && n <= 2:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/cut":
			// Half the promised body, then the connection closes.
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body[:len(body)/2])
			panic(http.ErrAbortHandler)
		default:
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body)
		}
	}))
	defer srv.Close()
	tests := []struct {
		path        string
		maxAttempts int
		wantCalls   int
		wantOpenErr error // nil: Open succeeds
		wantReadErr bool
	}{
		{"/x", 1, 1, nil, false},
		{"/busy", 1, 1, &resource.StatusError{}, false},
		{"/busy", 2, 2, &resource.StatusError{}, false},
		{"/busy", 3, 3, nil, false},
		{"/busy", 0, 3, nil, false},
		{"/missing", 5, 1, resource.ErrNotFound, false},
		{"/cut", 1, 1, nil, true},
	}
	for _, tt := range tests {
		calls = counter{}
		f, _ := newFetcher(t, resource.Options{MaxAttempts: tt.maxAttempts})
		s, err := f.Open(context.Background(), resource.Request{URL: srv.URL + tt.path})
		var se *resource.StatusError
		switch {
		case tt.wantOpenErr == nil && err != nil:
			t.Errorf("Open(%s, %d attempts) = %v, want a stream", tt.path, tt.maxAttempts, err)
			continue
		case tt.wantOpenErr == resource.ErrNotFound && !errors.Is(err, resource.ErrNotFound),
			tt.wantOpenErr != nil && tt.wantOpenErr != resource.ErrNotFound && !errors.As(err, &se):
			t.Errorf("Open(%s, %d attempts) = %v, want %T %v", tt.path, tt.maxAttempts, err, tt.wantOpenErr, tt.wantOpenErr)
		}
		if err == nil {
			if s.Size != int64(len(body)) {
				t.Errorf("Open(%s).Size = %d, want %d", tt.path, s.Size, len(body))
			}
			got, rerr := io.ReadAll(s)
			s.Close()
			if (rerr != nil) != tt.wantReadErr || (rerr == nil && !bytes.Equal(got, body)) {
				t.Errorf("Open(%s): read %d bytes, %v; want %d bytes, error %v", tt.path, len(got), rerr, len(body), tt.wantReadErr)
			}
		}
		if got := calls.get(); got != tt.wantCalls {
			t.Errorf("Open(%s, %d attempts): %d requests, want %d", tt.path, tt.maxAttempts, got, tt.wantCalls)
		}
	}

	f, _ := newFetcher(t, resource.Options{MaxAttempts: 2})
	if _, err := f.Open(context.Background(), resource.Request{URL: "ftp://example.com/x"}); !errors.Is(err, resource.ErrSchemeUnsupported) {
		t.Errorf("Open(ftp://…) = %v, want ErrSchemeUnsupported", err)
	}
	if _, err := f.Open(context.Background(), resource.Request{URL: "https://user:secret@127.0.0.1:1/x?token=t"}); err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "token") {
		t.Errorf("Open of a URL with credentials = %v, want an error naming it redacted", err)
	}
}

// TestOpenSlowReader checks that a reader slower than the idle timeout
// between reads is not taken for a stalled server, and that Close midway
// ends the transfer without a hang.
func TestOpenSlowReader(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 256<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
	}))
	defer srv.Close()
	f, _ := newFetcher(t, resource.Options{IdleTimeout: 50 * time.Millisecond})
	s, err := f.Open(context.Background(), resource.Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	var got int
	for {
		n, err := s.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read after %d bytes = %v, want the whole body", got, err)
		}
		time.Sleep(120 * time.Millisecond) // the disk is slow
	}
	s.Close()
	if got != len(body) {
		t.Errorf("read %d bytes, want %d", got, len(body))
	}

	s, err = f.Open(context.Background(), resource.Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s.Read(buf)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close midway did not return")
	}
}
