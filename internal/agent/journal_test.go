//go:build unix

package agent

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// idRecorder is a slog handler that keeps the MESSAGE_ID of every record.
type idRecorder struct {
	mu  *sync.Mutex
	ids *[]string
}

func (r idRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r idRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r idRecorder) WithGroup(string) slog.Handler            { return r }
func (r idRecorder) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == messageIDKey {
			r.mu.Lock()
			*r.ids = append(*r.ids, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

// The events tools hook carry their MESSAGE_ID: keys written and removed,
// checked in, check-in failed.
func TestMessageIDs(t *testing.T) {
	var ids []string
	rec := idRecorder{&sync.Mutex{}, &ids}
	ok := packetService(t, platformtest.Answer(200, ""), nil)
	broken := packetService(t, platformtest.Answer(400, ""), nil)
	root := userRoot(t)
	for _, step := range []struct {
		base string
		run  func(a *Agent) error
		want string
	}{
		{ok.URL, func(a *Agent) error { return a.CheckIn(context.Background()) }, MsgCheckedIn},
		{broken.URL, func(a *Agent) error { return a.CheckIn(context.Background()) }, MsgCheckInFailed},
		{ok.URL, func(a *Agent) error { return a.SSHKeys(context.Background(), "core") }, MsgKeysWritten},
	} {
		ids = nil
		a := newTestAgent(t, "packet", step.base, root)
		a.log = slog.New(rec)
		step.run(a)
		if !slices.Contains(ids, step.want) {
			t.Errorf("MESSAGE_IDs logged %v, want %s", ids, step.want)
		}
	}

	ids = nil
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/v1.json": platformtest.Answer(200, `{"public_keys":[]}`)})
	a := newTestAgent(t, "digitalocean", f.URL, root)
	a.log = slog.New(rec)
	if err := a.SSHKeys(context.Background(), "core"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, MsgKeysRemoved) {
		t.Errorf("MESSAGE_IDs logged %v, want %s", ids, MsgKeysRemoved)
	}
}
