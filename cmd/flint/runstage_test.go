package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// runMachine is a machine for `flint run`: its files under a temp dir, the
// environment pointing flint's well-known paths there, and the flags that
// point the cache, state and neednet files there too.
type runMachine struct {
	dir   string
	flags []string
}

func newRunMachine(t *testing.T, configFile string) runMachine {
	t.Helper()
	dir := t.TempDir()
	cmdline := filepath.Join(dir, "cmdline")
	if err := os.WriteFile(cmdline, []byte("quiet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IGNITION_KERNEL_CMDLINE_PATH", cmdline)
	t.Setenv("IGNITION_SYSTEM_CONFIG_DIR", filepath.Join(dir, "usr/lib/ignition"))
	t.Setenv("IGNITION_SYSTEM_LOCAL_CONFIG_DIR", filepath.Join(dir, "etc/ignition"))
	t.Setenv("IGNITION_SYSTEM_RUNTIME_CONFIG_DIR", filepath.Join(dir, "run/ignition"))
	if configFile != "" {
		p := filepath.Join(dir, "config.ign")
		if err := os.WriteFile(p, []byte(configFile), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("IGNITION_CONFIG_FILE", p)
	} else {
		t.Setenv("IGNITION_CONFIG_FILE", filepath.Join(dir, "missing.ign"))
	}
	return runMachine{dir: dir, flags: []string{
		"-config-cache", filepath.Join(dir, "run/ignition.json"),
		"--state-file", filepath.Join(dir, "run/ignition/state"),
		"-neednet=" + filepath.Join(dir, "run/ignition/neednet"),
		"--log-to-stdout",
	}}
}

func (m runMachine) path(rel string) string { return filepath.Join(m.dir, rel) }

func TestRunStage(t *testing.T) {
	const local = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`
	const remote = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","contents":{"source":"https://example.com/a"}}]}}`
	tests := []struct {
		name        string
		config      string
		args        []string // before the machine's flags
		setup       func(m runMachine)
		wantCode    int
		wantStdout  string
		wantStderr  string
		wantCache   bool
		wantNeedNet bool
	}{
		{name: "fetch-offline local config", config: local, args: []string{"run", "-stage", "fetch-offline", "-platform", "file"},
			wantCode: 0, wantStdout: "[finished] writing the config cache", wantCache: true},
		{name: "double-dash flags", config: local, args: []string{"run", "--stage=fetch-offline", "--platform=file", "--fetch-timeout=30s", "--root=/sysroot"},
			wantCode: 0, wantCache: true},
		{name: "needs the network later", config: remote, args: []string{"run", "-stage", "fetch-offline", "-platform", "file"},
			wantCode: 0, wantCache: true, wantNeedNet: true},
		{name: "missing config file", args: []string{"run", "-stage", "fetch-offline", "-platform", "file"},
			wantCode: 1, wantStderr: "flint: stage fetch-offline: fetching the user config from file: "},
		{name: "invalid config", config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"relative"}]}}`, args: []string{"run", "-stage", "fetch", "-platform", "file"},
			wantCode: 1, wantStderr: `path not absolute`},
		{name: "corrupt state file", config: local, args: []string{"run", "-stage", "fetch-offline", "-platform", "file"},
			setup: func(m runMachine) {
				os.MkdirAll(m.path("run/ignition"), 0o700)
				os.WriteFile(m.path("run/ignition/state"), []byte("{"), 0o600)
			},
			wantCode: 3, wantStderr: "flint: stage fetch-offline: setup failed: state file"},
		{name: "unknown stage", args: []string{"run", "-stage", "nonesuch", "-platform", "file"},
			wantCode: 2, wantStderr: `unknown stage "nonesuch" (known stages: fetch-offline, fetch, kargs, disks, mount, files, umount)`},
		{name: "unknown platform", args: []string{"run", "-stage", "fetch", "-platform", "nimbus"},
			wantCode: 2, wantStderr: `unknown platform "nimbus" (known platforms: `},
		{name: "no stage", args: []string{"run", "-platform", "file"}, wantCode: 2, wantStderr: "-stage is required"},
		{name: "no platform", args: []string{"run", "-stage", "fetch"}, wantCode: 2, wantStderr: "-platform is required"},
		{name: "bad flag", args: []string{"run", "-stage", "fetch", "-platform", "file", "-bogus"}, wantCode: 2, wantStderr: "flag provided but not defined: -bogus"},
		{name: "bad duration", args: []string{"run", "-stage", "fetch", "-platform", "file", "-fetch-timeout", "soon"}, wantCode: 2, wantStderr: "-fetch-timeout"},
		{name: "negative idle timeout", args: []string{"run", "-stage", "fetch", "-platform", "file", "-fetch-idle-timeout", "-1s"}, wantCode: 2, wantStderr: "-fetch-idle-timeout must not be negative"},
		{name: "help", args: []string{"run", "-h"}, wantCode: 0, wantStdout: "-fetch-idle-timeout DURATION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newRunMachine(t, tt.config)
			if tt.setup != nil {
				tt.setup(m)
			}
			args := append(append([]string{}, tt.args...), m.flags...)
			if tt.name == "help" {
				args = tt.args
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, nil, &stdout, &stderr)
			code := exitCode(err, &stderr)
			t.Logf("stdout:\n%s", &stdout)
			if code != tt.wantCode {
				t.Fatalf("run(%q) exit = %d, want %d\nstderr: %s", args, code, tt.wantCode, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout lacks %q", tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", &stderr, tt.wantStderr)
			}
			if _, err := os.Stat(m.path("run/ignition.json")); (err == nil) != tt.wantCache {
				t.Errorf("cache exists = %v, want %v", err == nil, tt.wantCache)
			}
			if _, err := os.Stat(m.path("run/ignition/neednet")); (err == nil) != tt.wantNeedNet {
				t.Errorf("neednet flag exists = %v, want %v", err == nil, tt.wantNeedNet)
			}
			if tt.wantCache {
				raw, err := os.ReadFile(m.path("run/ignition.json"))
				if err != nil {
					t.Fatal(err)
				}
				var cfg config.Config
				if err := json.Unmarshal(raw, &cfg); err != nil || len(cfg.Storage.Files) != 1 {
					t.Errorf("cache = %s (%v), want the config with its one file", raw, err)
				}
			}
		})
	}
}

// TestTuneGC: a stage collects at 400 % with a 256 MiB soft limit, unless
// GOGC or GOMEMLIMIT say otherwise.
func TestTuneGC(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) }()

	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != stageGCPercent {
		t.Errorf("GC percent = %d, want %d", got, stageGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != stageMemoryLimit {
		t.Errorf("memory limit = %d, want %d", got, stageMemoryLimit)
	}
	tuneGC(func(k string) string { return map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent = %d with GOGC set, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("memory limit = %d with GOMEMLIMIT set, want it left alone", got)
	}
}

// Where the files stage writes SSH keys: the build's setting, which
// Ignition's environment variable overrides; bad values are errors, not
// a guess.
func TestFragmentDefault(t *testing.T) {
	for _, tc := range []struct {
		build, env string
		want       bool
		wantErr    bool
	}{
		{"true", "", true, false},
		{"false", "", false, false},
		{"0", "", false, false},
		{"1", "", true, false},
		{"false", "true", true, false},
		{"true", "false", false, false},
		{"true", "0", false, false},
		{"true", "yes", false, true},
		{"maybe", "", false, true},
		{"maybe", "false", false, false},
	} {
		getenv := func(k string) string {
			if k == "IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT" {
				return tc.env
			}
			return ""
		}
		got, err := fragmentDefault(tc.build, getenv)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("fragmentDefault(build %q, env %q) = %v, %v; want %v, error %v", tc.build, tc.env, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestRunAuthorizedKeysFragmentFlag(t *testing.T) {
	const local = `{"ignition":{"version":"3.4.0"}}`
	m := newRunMachine(t, local)
	var stdout, stderr bytes.Buffer
	args := append([]string{"run", "-stage", "fetch-offline", "-platform", "file", "-authorized-keys-fragment=false"}, m.flags...)
	if code := exitCode(run(context.Background(), args, nil, &stdout, &stderr), &stderr); code != 0 {
		t.Errorf("run -authorized-keys-fragment=false exit = %d, want 0\n%s", code, stderr.String())
	}
	stderr.Reset()
	args = append([]string{"run", "-stage", "fetch-offline", "-platform", "file", "-authorized-keys-fragment=maybe"}, m.flags...)
	if code := exitCode(run(context.Background(), args, nil, &stdout, &stderr), &stderr); code != 2 {
		t.Errorf("run -authorized-keys-fragment=maybe exit = %d, want 2 (usage)\n%s", code, stderr.String())
	}
	stderr.Reset()
	t.Setenv("IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT", "sometimes")
	args = append([]string{"run", "-stage", "fetch-offline", "-platform", "file"}, m.flags...)
	if code := exitCode(run(context.Background(), args, nil, &stdout, &stderr), &stderr); code != 3 || !strings.Contains(stderr.String(), "IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT") {
		t.Errorf("run with IGNITION_WRITE_AUTHORIZED_KEYS_FRAGMENT=sometimes exit = %d, want 3 naming the variable\n%s", code, stderr.String())
	}
}
