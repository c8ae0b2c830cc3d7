package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/stages"
)

// TestStageRun: the fetch stage caches the config, says so with the
// cache's path, and leaves the config in the environment for the engine.
func TestStageRun(t *testing.T) {
	var buf bytes.Buffer
	f := &recordingFetcher{}
	d := acquireDeps(t, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a"}]}}`, f)
	s := Stage{Options{Platform: d.Platform, ConfigDirs: d.ConfigDirs, ProviderEnv: d.Env, MaxConfigSize: 1 << 20}}
	e := &stages.Env{
		Logger:  slog.New(slog.NewTextHandler(&buf, nil)),
		Fetcher: stageFetcher{f},
		State:   &stages.State{},
		Cmdline: d.Cmdline,
		Files:   stages.Files{ConfigCache: d.ConfigCache, StateFile: filepath.Join(filepath.Dir(d.ConfigCache), "ignition/state")},
	}
	if err := s.Run(context.Background(), e); err != nil {
		t.Fatalf("Stage.Run() = %v, want nil", err)
	}
	if !strings.Contains(buf.String(), "fetch complete") || !strings.Contains(buf.String(), d.ConfigCache) {
		t.Errorf("Stage.Run() logged %q, want the fetch to be reported complete with the cache path", &buf)
	}
	if len(e.Config.Storage.Files) != 1 || e.Config.Storage.Files[0].Path != "/a" {
		t.Errorf("Stage.Run() left the config %+v, want the one fetched", e.Config.Storage)
	}
	if _, err := os.Stat(d.ConfigCache); err != nil {
		t.Errorf("no cache: %v", err)
	}
}

// stageFetcher is a recordingFetcher as the stages' Fetcher.
type stageFetcher struct{ *recordingFetcher }

func (stageFetcher) SetConfigLimit(int64) {}

func (stageFetcher) Fetch(context.Context, config.Resource, io.Writer) error {
	return errors.New("no files here")
}
