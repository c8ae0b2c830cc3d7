package fetch

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var buf bytes.Buffer
	err := Run(context.Background(), Deps{Logger: slog.New(slog.NewTextHandler(&buf, nil)), ConfigCache: "/run/ignition.json"})
	if err != nil {
		t.Fatalf("Run() = %v, want nil", err)
	}
	if !strings.Contains(buf.String(), "fetch complete") || !strings.Contains(buf.String(), "/run/ignition.json") {
		t.Errorf("Run() logged %q, want the fetch to be reported complete with the cache path", &buf)
	}
}
