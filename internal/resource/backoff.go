package resource

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff is the retry schedule of one request: decorrelated jitter
// ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015), each
// wait drawn uniformly between base and three times the last one, capped:
// never shorter than base nor longer than limit, as the doubling schedule
// it replaces, but a fleet that failed together does not retry together.
// Without jitter (Options.NoJitter, to measure the difference) it doubles
// from base up to limit, as Ignition's does (coreos/ignition
// internal/resource/http.go).
type backoff struct {
	base, limit time.Duration
	noJitter    bool
	// rand returns a number in [0, n); nil is math/rand/v2's.
	rand func(n int64) int64
	last time.Duration
}

// next returns the wait before the next retry.
func (b *backoff) next() time.Duration {
	if b.noJitter {
		if b.last == 0 {
			b.last = b.base
		} else {
			b.last = min(2*b.last, b.limit)
		}
		return b.last
	}
	r := b.rand
	if r == nil {
		r = rand.Int64N
	}
	hi := min(3*max(b.last, b.base), b.limit)
	d := b.base
	if hi > b.base {
		d += time.Duration(r(int64(hi-b.base) + 1))
	}
	b.last = d
	return d
}

// spread returns the extra wait after a server's Retry-After of d: up
// to half of it at random, so that the machines a busy server turned
// away at one moment do not all come back at the same second (RFC 9110
// section 10.2.3 sets a minimum, not a time); none without jitter.
func (b *backoff) spread(d time.Duration) time.Duration {
	if b.noJitter || d < 2 {
		return 0
	}
	r := b.rand
	if r == nil {
		r = rand.Int64N
	}
	return time.Duration(r(int64(d/2) + 1))
}

// maxRetryAfter caps a server's Retry-After when the fetch has no deadline
// of its own (timeouts.httpTotal unset): a misconfigured server must not
// hold a boot for a day.
const maxRetryAfter = 5 * time.Minute

// retryAfter reads a 503 or 429 answer's Retry-After (RFC 9110 section
// 10.2.3): delay-seconds or an HTTP-date, relative to now. ok is false
// when the status is another or the header is absent or malformed; a date
// in the past is a wait of 0.
func retryAfter(status int, h http.Header, now time.Time) (d time.Duration, ok bool) {
	if status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests {
		return 0, false
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return min(time.Duration(n)*time.Second, maxRetryAfter), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}

// capToDeadline shortens d so a wait ends no later than the context's
// deadline (the fetch's httpTotal, or the caller's): after it there is no
// attempt to wait for.
func capToDeadline(d time.Duration, deadline time.Time, ok bool, now time.Time) time.Duration {
	if !ok {
		return d
	}
	return max(min(d, deadline.Sub(now)), 0)
}
