package resource

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

func TestCachedToken(t *testing.T) {
	f := &Fetcher{log: slog.New(slog.DiscardHandler)}
	var st tokenState
	calls := 0
	expiry := time.Now().Add(time.Hour)
	fetch := func(context.Context) (string, time.Time, error) {
		calls++
		return "tok" + string(rune('0'+calls)), expiry, nil
	}
	get := func() string { return f.cachedToken(context.Background(), &st, 5*time.Minute, fetch, "no token") }
	if got := get(); got != "tok1" || calls != 1 {
		t.Fatalf("cachedToken = %q after %d fetches, want tok1 after 1", got, calls)
	}
	if got := get(); got != "tok1" || calls != 1 {
		t.Errorf("cachedToken with an hour left = %q after %d fetches, want tok1 after 1", got, calls)
	}
	st.expiry = time.Now().Add(time.Minute)
	if got := get(); got != "tok2" || calls != 2 {
		t.Errorf("cachedToken with a minute left of a 5-minute margin = %q after %d fetches, want tok2 after 2", got, calls)
	}

	var failed tokenState
	fails := 0
	fail := func(context.Context) (string, time.Time, error) {
		fails++
		return "", time.Time{}, errors.New("no metadata server")
	}
	for range 2 {
		if got := f.cachedToken(context.Background(), &failed, time.Minute, fail, "no token"); got != "" {
			t.Errorf("cachedToken after a failure = %q, want none", got)
		}
	}
	if fails != 1 {
		t.Errorf("a failed token was asked for %d times, want once", fails)
	}
}
