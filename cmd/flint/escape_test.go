package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestOutputEscaped: a key, a path or an error carrying a newline, a NUL
// or a terminal escape from a config is printed as one line with the
// value escaped, by flint validate and on flint's standard error.
func TestOutputEscaped(t *testing.T) {
	cfg := writeConfig(t, `{"ignition":{"version":"3.4.0"},"stor\nage\u0000":{},"storage":{"files":[{"path":"a\nerror at $.x, line 1 col 1: forged\u001b[2J"}]}}`)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"validate", cfg}, strings.NewReader(""), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 1 {
		t.Fatalf("exit = %d, want 1\n%s%s", code, &stdout, &stderr)
	}
	out := stdout.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || strings.ContainsAny(out, "\x00\x1b") {
		t.Fatalf("validate printed %d lines, want 2, escaped:\n%q", len(lines), out)
	}
	for _, want := range []string{`warning at $.stor\nage\x00, line 1 col 33: unused key stor\nage\x00`,
		`error at $.storage.files.0.path, line 1 col 82: path not absolute: "a\nerror at $.x, line 1 col 1: forged\x1b[2J"`} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output = %q, want it to contain %q", out, want)
		}
	}

	stderr.Reset()
	exitCode(errors.New("stage files: file /a\nflint: all good\x00\x1b[2J"), &stderr)
	if got, want := stderr.String(), "flint: stage files: file /a\\nflint: all good\\x00\\x1b[2J\n"; got != want {
		t.Errorf("exitCode printed %q, want %q", got, want)
	}
}
