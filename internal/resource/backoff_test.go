package resource

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestBackoffJitterBounds(t *testing.T) {
	base, limit := 200*time.Millisecond, 5*time.Second
	for _, tt := range []struct {
		name string
		rand func(int64) int64
	}{
		{"lowest", func(int64) int64 { return 0 }},
		{"highest", func(n int64) int64 { return n - 1 }},
		{"random", rand.New(rand.NewPCG(1, 2)).Int64N},
	} {
		b := backoff{base: base, limit: limit, rand: tt.rand}
		prev := time.Duration(0)
		for i := range 50 {
			d := b.next()
			if d < base || d > limit {
				t.Fatalf("%s: next() #%d = %s, want within [%s, %s]", tt.name, i, d, base, limit)
			}
			if hi := 3 * max(prev, base); d > hi {
				t.Fatalf("%s: next() #%d = %s, want at most 3 × the last (%s)", tt.name, i, d, hi)
			}
			prev = d
		}
	}
	// The highest draw grows by three each time until the cap.
	b := backoff{base: base, limit: limit, rand: func(n int64) int64 { return n - 1 }}
	var got []time.Duration
	for range 5 {
		got = append(got, b.next())
	}
	want := []time.Duration{600 * time.Millisecond, 1800 * time.Millisecond, 5 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("highest draws = %v, want %v", got, want)
			break
		}
	}
}

func TestBackoffSpread(t *testing.T) {
	// 300 machines retrying from the same instant: with jitter their
	// third retry is spread over seconds, without it they all wait the
	// same.
	seen := map[time.Duration]bool{}
	for i := range 300 {
		b := backoff{base: 200 * time.Millisecond, limit: 5 * time.Second, rand: rand.New(rand.NewPCG(uint64(i), 7)).Int64N}
		b.next()
		b.next()
		seen[b.next().Truncate(100*time.Millisecond)] = true
	}
	if len(seen) < 10 {
		t.Errorf("300 jittered third waits fall in %d buckets of 100 ms, want at least 10", len(seen))
	}
	b := backoff{base: 200 * time.Millisecond, limit: time.Second, noJitter: true}
	var got []time.Duration
	for range 4 {
		got = append(got, b.next())
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("no jitter: waits = %v, want %v", got, want)
		}
	}
}

func TestRetryAfterSpread(t *testing.T) {
	b := backoff{base: time.Millisecond, limit: time.Second, rand: func(n int64) int64 { return n - 1 }}
	if got := b.spread(2 * time.Second); got != time.Second {
		t.Errorf("spread(2s) with the highest draw = %s, want 1s", got)
	}
	b.rand = func(int64) int64 { return 0 }
	if got := b.spread(2 * time.Second); got != 0 {
		t.Errorf("spread(2s) with the lowest draw = %s, want 0", got)
	}
	b.noJitter = true
	if got := b.spread(2 * time.Second); got != 0 {
		t.Errorf("spread(2s) without jitter = %s, want 0", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		status int
		value  string
		want   time.Duration
		ok     bool
	}{
		{503, "7", 7 * time.Second, true},
		{429, " 0 ", 0, true},
		{503, "Tue, 01 Dec 2026 12:00:30 GMT", 30 * time.Second, true},
		{429, "Tuesday, 01-Dec-26 12:01:00 GMT", time.Minute, true}, // RFC 850
		{503, "Tue Dec  1 12:00:05 2026", 5 * time.Second, true},    // asctime
		{503, "Tue, 01 Dec 2026 11:00:00 GMT", 0, true},             // past
		{503, "86400", maxRetryAfter, true},
		{503, "-3", 0, false},
		{503, "soon", 0, false},
		{503, "", 0, false},
		{500, "7", 0, false},
		{502, "7", 0, false},
	} {
		h := http.Header{}
		if tt.value != "" {
			h.Set("Retry-After", tt.value)
		}
		got, ok := retryAfter(tt.status, h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%d, %q) = %s, %v, want %s, %v", tt.status, tt.value, got, ok, tt.want, tt.ok)
		}
	}
	dl := now.Add(2 * time.Second)
	if got := capToDeadline(10*time.Second, dl, true, now); got != 2*time.Second {
		t.Errorf("capToDeadline(10s, now+2s) = %s, want 2s", got)
	}
	if got := capToDeadline(10*time.Second, time.Time{}, false, now); got != 10*time.Second {
		t.Errorf("capToDeadline(10s, no deadline) = %s, want 10s", got)
	}
}

func TestFetchHonoursRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		var n atomic.Int32
		var first time.Time
		var gap time.Duration
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				first = time.Now()
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(status)
				return
			}
			gap = time.Since(first)
			w.Write([]byte("ok"))
		}))
		f := New(Options{Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
		got, err := f.Get(context.Background(), Request{URL: srv.URL})
		srv.Close()
		if err != nil || string(got) != "ok" {
			t.Fatalf("Get after %d with Retry-After = %q, %v, want ok", status, got, err)
		}
		if gap < 900*time.Millisecond || gap > 2*time.Second {
			t.Errorf("Get after %d with Retry-After: 1: retried after %s, want 1 to 1.5 s", status, gap)
		}
	}
}

func TestRetryAfterCappedByTotal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	f := New(Options{})
	f.SetTotalTimeout(500 * time.Millisecond)
	start := time.Now()
	_, err := f.Get(context.Background(), Request{URL: srv.URL})
	if err == nil {
		t.Fatal("Get of an always-503 server = nil error, want a timeout")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Get with Retry-After: 120 and httpTotal 0.5s took %s, want about 0.5s", d)
	}
}
