package fetch

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
)

// recordingFetcher serves data URLs and records the settings it is
// configured with.
type recordingFetcher struct {
	configured []config.Ignition
}

func (f *recordingFetcher) Configure(_ context.Context, ign config.Ignition) error {
	f.configured = append(f.configured, ign)
	return nil
}

func (f *recordingFetcher) SetTotalTimeout(time.Duration) {}

func (f *recordingFetcher) FetchConfig(_ context.Context, res config.Resource) ([]byte, error) {
	s := *res.Source
	data, ok := strings.CutPrefix(s, "data:,")
	if !ok {
		return nil, errors.New("only data URLs here")
	}
	out, err := url.PathUnescape(data)
	return []byte(out), err
}

func (f *recordingFetcher) CABundle(context.Context, config.Resource) ([]byte, error) {
	return nil, errors.New("no CA bundles here")
}

func (f *recordingFetcher) Get(context.Context, resource.Request) ([]byte, error) {
	return nil, errors.New("no metadata here")
}

type served string

func (s served) FetchConfig(context.Context) ([]byte, error) { return []byte(s), nil }

func acquireDeps(t *testing.T, user string, f Fetcher) AcquireDeps {
	t.Helper()
	dir := t.TempDir()
	return AcquireDeps{
		Platform:    platform.Platform{ID: "test", New: func(platform.Env) platform.Provider { return served(user) }},
		ConfigDirs:  platform.ConfigDirs{Runtime: filepath.Join(dir, "run"), Local: filepath.Join(dir, "etc"), System: filepath.Join(dir, "usr")},
		Cmdline:     stages.Cmdline{Args: platform.ParseCmdline("quiet\n")},
		Env:         platform.Env{Root: dir},
		Fetcher:     f,
		ConfigCache: filepath.Join(dir, "run/ignition.json"),
		Logger:      slog.New(slog.DiscardHandler),
	}
}

// The fetcher is configured once per distinct fetch settings: a config
// whose merged config changes nothing about fetching configures it once,
// one whose merged config adds a timeout twice.
func TestAcquireConfiguresFetcherOnce(t *testing.T) {
	ref := func(cfg string) string { return "data:," + url.PathEscape(cfg) }
	merged := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/merged"}]}}`
	withTimeout := `{"ignition":{"version":"3.4.0","timeouts":{"httpTotal":30}}}`
	for _, tc := range []struct {
		name, user string
		want       int
	}{
		{"no reference", `{"ignition":{"version":"3.4.0"}}`, 1},
		{"merge, same settings", `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"` + ref(merged) + `"}]}}}`, 1},
		{"merge adds a timeout", `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"` + ref(withTimeout) + `"}]}}}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &recordingFetcher{}
			cfg, fetched, err := Acquire(context.Background(), acquireDeps(t, tc.user, f))
			if err != nil {
				t.Fatalf("Acquire() = %v", err)
			}
			if len(f.configured) != tc.want {
				t.Errorf("Configure called %d times, want %d", len(f.configured), tc.want)
			}
			if last := f.configured[len(f.configured)-1]; last.Timeouts != cfg.Ignition.Timeouts {
				t.Errorf("fetcher left with timeouts %+v, the rendered config has %+v", last.Timeouts, cfg.Ignition.Timeouts)
			}
			if len(fetched) == 0 || fetched[0] != (stages.Fetched{Kind: "user", Source: "test"}) {
				t.Errorf("fetched = %+v, want the user config from test first", fetched)
			}
		})
	}
}
