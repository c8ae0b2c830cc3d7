package engine

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestKargsHelper(t *testing.T) {
	env := map[string]string{EnvKargsHelper: "/opt/distro/kargs"}
	if got := kargsHelper(func(k string) string { return env[k] }); got != "/opt/distro/kargs" {
		t.Errorf("kargsHelper($%s set) = %q, want it", EnvKargsHelper, got)
	}
	// Without the variable: the default path only if this machine has it.
	want := ""
	if exists(DefaultKargsHelper) {
		want = DefaultKargsHelper
	}
	if got := kargsHelper(func(string) string { return "" }); got != want {
		t.Errorf("kargsHelper(unset) = %q, want %q", got, want)
	}
}

// Outside the initramfs the kargs stage must never reboot the machine it
// runs on (a developer's laptop, the blackbox tier).
func TestInitramfsReboot(t *testing.T) {
	r := runnerFunc(func(context.Context, string, ...string) ([]byte, error) {
		t.Fatal("initramfsReboot ran a command while being set up")
		return nil, nil
	})
	got := initramfsReboot(slog.New(slog.DiscardHandler), r)
	if exists(initrdRelease) != (got != nil) {
		t.Errorf("initramfsReboot() = %v with %s present: %v", got != nil, initrdRelease, exists(initrdRelease))
	}
}

type runnerFunc func(ctx context.Context, name string, args ...string) ([]byte, error)

func (f runnerFunc) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f(ctx, name, args...)
}

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
		path := filepath.Join(t.TempDir(), "cmdline")
		if err := os.WriteFile(path, []byte(tt.cmdline+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{CmdlinePath: path}.withDefaults()
		if got := idleTimeoutKarg(o); got != tt.want {
			t.Errorf("idleTimeoutKarg(%q) = %v, want %v", tt.cmdline, got, tt.want)
		}
	}
}
