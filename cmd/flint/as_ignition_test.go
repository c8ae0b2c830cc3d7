package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// asTool runs the front end of name (runAs, as a symlink would) and returns
// its exit status and streams.
func asTool(t *testing.T, name string, args []string, stdin string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runAs(context.Background(), name, args, strings.NewReader(stdin), &stdout, &stderr)
	return exitCode(err, &stderr), stdout.String(), stderr.String()
}

func TestIgnitionCommandLine(t *testing.T) {
	const local = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`
	for _, tc := range []struct {
		name       string
		args       []string // the machine's cache, state and neednet flags follow
		config     string
		wantCode   int
		wantStdout string
		wantStderr string
		wantMotd   bool
	}{
		{name: "version", args: []string{"--version"}, wantStdout: "Ignition v2.26.0 (flint "},
		{name: "single-dash version", args: []string{"-version"}, wantStdout: "Ignition v"},
		{name: "no platform", args: []string{"--stage=files"}, wantCode: 2, wantStderr: "'--platform' must be provided\n"},
		{name: "no stage", args: []string{"--platform=file"}, wantCode: 2, wantStderr: "'--stage' must be provided\n"},
		{name: "unknown platform", args: []string{"--platform=nimbus", "--stage=files"}, wantCode: 2,
			wantStderr: `invalid value "nimbus" for flag -platform: nimbus is not a valid platform`},
		{name: "unknown stage", args: []string{"--platform", "file", "--stage", "finish"}, wantCode: 2,
			wantStderr: `invalid value "finish" for flag -stage: finish is not a valid stage`},
		{name: "unknown flag", args: []string{"--frob"}, wantCode: 2, wantStderr: "flag provided but not defined: -frob\nUsage of ignition:\n"},
		{name: "help", args: []string{"-h"}, wantCode: 0, wantStderr: "  -state-file string\n"},
		{name: "flint-only flag refused", args: []string{"--platform=file", "--stage=files", "--device-timeout=1s"}, wantCode: 2,
			wantStderr: "flag provided but not defined: -device-timeout"},
		{name: "stage fails", args: []string{"--platform=file", "--stage=fetch-offline"}, wantCode: 1,
			wantStderr: "Ignition failed: stage fetch-offline: fetching the user config from file"},
		{name: "fetch-offline then files", args: []string{"--platform=file", "--stage=fetch-offline"}, config: local, wantMotd: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newRunMachine(t, tc.config)
			root := m.path("sysroot")
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{}, tc.args...), m.flags...)
			args = append(args, "--root="+root)
			code, stdout, stderr := asTool(t, "ignition", args, "")
			if code != tc.wantCode {
				t.Fatalf("ignition %q exit = %d, want %d\nstdout: %s\nstderr: %s", args, code, tc.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("ignition %q stdout = %q, want it to contain %q", args, stdout, tc.wantStdout)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("ignition %q stderr = %q, want it to contain %q", args, stderr, tc.wantStderr)
			}
			if !tc.wantMotd {
				return
			}
			// The next stage reads the cache fetch-offline wrote, as
			// Ignition's units chain them.
			files := append([]string{"-platform", "file", "-stage", "files"}, m.flags...)
			files = append(files, "-root", root)
			if code, stdout, stderr := asTool(t, "ignition", files, ""); code != 0 {
				t.Fatalf("ignition %q exit = %d, want 0\nstdout: %s\nstderr: %s", files, code, stdout, stderr)
			}
			got, err := os.ReadFile(filepath.Join(root, "etc/motd"))
			if string(got) != "hello" {
				t.Errorf("sysroot/etc/motd = %q (%v), want %q", got, err, "hello")
			}
		})
	}
}

// TestFlintNameArgs: `flint NAME ARGS` is the front end of NAME without a
// symlink.
func TestFlintNameArgs(t *testing.T) {
	for _, name := range []string{"ignition", "ignition-validate", "ignition-apply", "ignition-rmcfg"} {
		code, stdout, stderr := asTool(t, "flint", []string{name, "--version"}, "")
		if code != 0 || !strings.HasPrefix(stdout, "Ignition v") {
			t.Errorf("flint %s --version = %d, %q, %q; want 0 and Ignition's version line", name, code, stdout, stderr)
		}
	}
	code, stdout, _ := asTool(t, "flint", []string{"butane", "--version"}, "")
	if code != 0 || !strings.HasPrefix(stdout, "Butane v") {
		t.Errorf("flint butane --version = %d, %q; want 0 and Butane's version line", code, stdout)
	}
}

func TestIgnitionValidateCommandLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.ign", `{"ignition":{"version":"3.4.0"}}`)
	warn := write("warn.ign", `{"ignition":{"version":"3.4.0"},"storage":{"filez":[]}}`)
	bad := write("bad.ign", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"etc/motd"}]}}`)
	empty := write("empty.ign", "")
	future := write("future.ign", `{"ignition":{"version":"9.0.0"}}`)
	noVersion := write("noversion.ign", `{"ignition":{}}`)
	syntax := write("syntax.ign", `{"ignition":`)
	for _, tc := range []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string // exactly
		wantStderr string // contained
	}{
		{name: "valid", args: []string{good}},
		{name: "valid from stdin", args: []string{"-"}, stdin: `{"ignition":{"version":"3.0.0"}}`},
		{name: "warnings pass", args: []string{warn}, wantStdout: "warning at $.storage.filez, line 1 col 44: unused key filez; did you mean \"files\"?\n"},
		{name: "errors", args: []string{bad}, wantCode: 1, wantStdout: "error at $.storage.files.0.path, line 1 col 61: path not absolute: \"etc/motd\"\n"},
		{name: "syntax", args: []string{syntax}, wantCode: 1, wantStderr: ""},
		{name: "empty", args: []string{empty}, wantCode: 1, wantStderr: "couldn't parse config: not a config (empty)\n"},
		{name: "unknown version", args: []string{future}, wantCode: 1, wantStderr: "couldn't parse config: unsupported config version\n"},
		{name: "no version", args: []string{noVersion}, wantCode: 1, wantStderr: "couldn't parse config: invalid config version (couldn't parse)\n"},
		{name: "missing file", args: []string{filepath.Join(dir, "nonesuch")}, wantCode: 1, wantStderr: "couldn't read config: "},
		{name: "no file", wantCode: 1, wantStderr: "Usage:\n  ignition-validate [flags] config.ign\n"},
		{name: "two files", args: []string{good, good}, wantCode: 1, wantStderr: "Usage:\n"},
		{name: "version", args: []string{"--version"}, wantStdout: ignitionVersion() + "\n"},
		{name: "unknown flag", args: []string{"--strict", good}, wantCode: 2, wantStderr: "flag provided but not defined: -strict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := asTool(t, "ignition-validate", tc.args, tc.stdin)
			if code != tc.wantCode {
				t.Fatalf("ignition-validate %q exit = %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.wantCode, stdout, stderr)
			}
			if tc.name != "syntax" && stdout != tc.wantStdout {
				t.Errorf("ignition-validate %q stdout = %q, want %q", tc.args, stdout, tc.wantStdout)
			}
			if tc.name == "syntax" && !strings.HasPrefix(stdout, "error at line 1 col ") {
				t.Errorf("ignition-validate %q stdout = %q, want a syntax error with its line and column", tc.args, stdout)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("ignition-validate %q stderr = %q, want it to contain %q", tc.args, stderr, tc.wantStderr)
			}
		})
	}
}

func TestIgnitionRmcfgCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "version", args: []string{"--version"}, wantStdout: ignitionVersion() + "\n"},
		{name: "no platform", wantCode: 2, wantStderr: "'--platform' must be provided\n"},
		{name: "argument", args: []string{"--platform=vmware", "extra"}, wantCode: 2, wantStderr: "Usage: ignition-rmcfg [options]\nOptions:\n"},
		{name: "unknown flag", args: []string{"--frob"}, wantCode: 2, wantStderr: "      --version           print the version and exit\nunknown flag: --frob\n"},
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStderr: "Options:\n      --log-to-stdout     log to stdout instead of the system log\n"},
		{name: "unknown platform", args: []string{"--platform", "nimbus"}, wantCode: 2, wantStderr: `invalid platform name "nimbus" provided`},
		{name: "platform without a config to delete", args: []string{"--platform=qemu", "--log-to-stdout"}, wantCode: 1,
			wantStderr: "couldn't delete config: cannot delete config on this platform\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := asTool(t, "ignition-rmcfg", tc.args, "")
			if code != tc.wantCode {
				t.Fatalf("ignition-rmcfg %q exit = %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("ignition-rmcfg %q stdout = %q, want it to contain %q", tc.args, stdout, tc.wantStdout)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("ignition-rmcfg %q stderr = %q, want it to contain %q", tc.args, stderr, tc.wantStderr)
			}
		})
	}
}

// TestUpstreamNamesDispatch: each name this file's front ends answer to
// dispatches to its own front end and is listed by `flint help`.
func TestUpstreamNamesDispatch(t *testing.T) {
	_, help, _ := asTool(t, "flint", []string{"help"}, "")
	for _, name := range []string{"ignition", "ignition-validate", "ignition-apply", "ignition-rmcfg", "butane"} {
		if _, ok := personality(name); !ok {
			t.Errorf("personality(%q) = false, want its front end", name)
		}
		if !slices.Contains(upstreamNames, name) {
			t.Errorf("upstreamNames lacks %q", name)
		}
		if !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("flint help does not list %s:\n%s", name, help)
		}
	}
	if _, ok := personality("flint"); ok {
		t.Errorf("personality(flint) = true, want flint's own commands")
	}
}
