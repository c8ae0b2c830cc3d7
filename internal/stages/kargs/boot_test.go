package kargs

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestHelper(t *testing.T) {
	env := map[string]string{EnvHelper: "/opt/distro/kargs"}
	if got := helper(func(k string) string { return env[k] }); got != "/opt/distro/kargs" {
		t.Errorf("helper($%s set) = %q, want it", EnvHelper, got)
	}
	// Without the variable: the default path only if this machine has it.
	want := ""
	if _, err := os.Stat(DefaultHelper); err == nil {
		want = DefaultHelper
	}
	if got := helper(func(string) string { return "" }); got != want {
		t.Errorf("helper(unset) = %q, want %q", got, want)
	}
}

// Outside the initramfs the kargs stage must never reboot the machine it
// runs on (a developer's laptop, the blackbox tier).
func TestInitramfsReboot(t *testing.T) {
	r := runnerFunc(func(context.Context, string, ...string) ([]byte, error) {
		t.Fatal("initramfsReboot ran a command while being set up")
		return nil, nil
	})
	for _, initramfs := range []bool{false, true} {
		got := initramfsReboot(slog.New(slog.DiscardHandler), initramfs, r)
		if initramfs != (got != nil) {
			t.Errorf("initramfsReboot(initramfs %v) = %v, want a reboot only in the initramfs", initramfs, got != nil)
		}
	}
}

type runnerFunc func(ctx context.Context, name string, args ...string) ([]byte, error)

func (f runnerFunc) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f(ctx, name, args...)
}

// TestSetWanted: the flag that lets flint-kargs.service run follows the
// config's kernel arguments; a flag left by another config goes.
func TestSetWanted(t *testing.T) {
	for _, c := range []struct {
		name string
		args config.KernelArguments
		want bool
	}{
		{"none", config.KernelArguments{}, false},
		{"empty lists", config.KernelArguments{ShouldExist: []string{}}, false},
		{"should exist", config.KernelArguments{ShouldExist: []string{"quiet"}}, true},
		{"should not exist", config.KernelArguments{ShouldNotExist: []string{"rhgb"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			flag := filepath.Join(t.TempDir(), "run", WantedFlag)
			if err := SetWanted(slog.New(slog.DiscardHandler), flag, config.KernelArguments{ShouldExist: []string{"x"}}); err != nil {
				t.Fatal(err)
			}
			if err := SetWanted(slog.New(slog.DiscardHandler), flag, c.args); err != nil {
				t.Fatalf("SetWanted() = %v", err)
			}
			if _, err := os.Stat(flag); (err == nil) != c.want {
				t.Errorf("after SetWanted the flag exists: %v, want %v", err == nil, c.want)
			}
		})
	}
}
