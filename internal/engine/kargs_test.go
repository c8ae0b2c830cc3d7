package engine

import (
	"context"
	"log/slog"
	"testing"
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
