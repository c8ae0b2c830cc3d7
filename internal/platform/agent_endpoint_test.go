package platform

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// urlRecorder is a Getter that records every URL it is asked for and
// answers each with 404.
type urlRecorder struct {
	mu   sync.Mutex
	urls []string
}

func (g *urlRecorder) Get(_ context.Context, r resource.Request) ([]byte, error) {
	g.mu.Lock()
	g.urls = append(g.urls, r.URL)
	g.mu.Unlock()
	return nil, resource.ErrNotFound
}

// TestEnvEndpointAddressesEveryService checks that Env.Endpoint is the
// one way to address a platform's services, on both sides: every request
// of the config provider and of every agent function of every platform
// goes to it (Azure's WireServer and CloudStack's virtual router too,
// which are found through DHCP otherwise).
func TestEnvEndpointAddressesEveryService(t *testing.T) {
	const base = "http://127.0.0.1:9"
	for _, p := range All() {
		t.Run(p.ID, func(t *testing.T) {
			g := &urlRecorder{}
			env := Env{Getter: g, Endpoint: base, Root: t.TempDir(), Wait: time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
			host := &Host{Env: env, ID: p.ID, LocalPort: func() int { return 0 }}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if p.Metadata != nil {
				p.Metadata(ctx, host)
			}
			if p.HostnameOnly != nil {
				p.HostnameOnly(ctx, host)
			}
			if p.Attributes != nil {
				p.Attributes(ctx, host)
			}
			if p.Network != nil {
				p.Network(ctx, host)
			}
			if p.CheckIn != nil {
				p.CheckIn(ctx, host)
			}
			if p.ReportFailure != nil {
				p.ReportFailure(ctx, host, "stage files: failed")
			}
			agentRequests := len(g.urls)
			if p.New != nil {
				p.New(env).FetchConfig(ctx)
			}
			for _, u := range g.urls {
				if !strings.HasPrefix(u, base+"/") {
					t.Errorf("request to %s, want every request under Env.Endpoint %s", u, base)
				}
			}
			if agentRequests == 0 && (p.CheckIn != nil || p.ReportFailure != nil) {
				t.Errorf("check-in and failure report made no request")
			}
		})
	}
}
