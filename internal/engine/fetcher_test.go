package engine

import (
	"log/slog"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages"
)

func TestIdleTimeoutKarg(t *testing.T) {
	tests := []struct {
		cmdline string
		want    time.Duration
	}{
		{"ignition.platform.id=qemu", 0},
		{"flint.fetch_idle_timeout=45", 45 * time.Second},
		{"flint.fetch_idle_timeout=1m30s quiet", 90 * time.Second},
		{"flint.fetch_idle_timeout=soon", 0},
		{"flint.fetch_idle_timeout=0", 0},
		{"flint.fetch_idle_timeout=-5s", 0},
	}
	for _, tt := range tests {
		cmdline := stages.Cmdline{Args: platform.ParseCmdline(tt.cmdline + "\n")}
		if got := idleTimeoutKarg(cmdline, slog.New(slog.DiscardHandler)); got != tt.want {
			t.Errorf("idleTimeoutKarg(%q) = %v, want %v", tt.cmdline, got, tt.want)
		}
	}
}
