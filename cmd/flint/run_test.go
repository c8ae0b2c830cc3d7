package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.ign")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateExitCodes(t *testing.T) {
	valid := writeConfig(t, `{"ignition":{"version":"3.4.0"}}`)
	warns := writeConfig(t, `{"ignition":{"version":"3.4.0"},"storge":{}}`)
	invalid := writeConfig(t, "{\"ignition\":{\"version\":\"3.4.0\"},\n\"storage\":{\"files\":[{\"path\":\"etc/x\"}]}}")
	butane := writeConfig(t, "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        local: config.ign\n    - path: etc/x\n")
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantOut  string
	}{
		{"valid", []string{"validate", valid}, "", 0, ""},
		{"warnings allowed", []string{"validate", warns}, "", 0, `warning at $.storge, line 1 col 33: unused key storge; did you mean "storage"?`},
		{"strict makes warnings fatal", []string{"validate", "-strict", warns}, "", 1, "unused key storge"},
		{"invalid", []string{"validate", invalid}, "", 1, `error at $.storage.files.0.path, line 2 col 29: path not absolute: "etc/x"`},
		{"stdin", []string{"validate", "-"}, `{"ignition":{"version":"1.0.0"}}`, 1, "spec 1.x and 2.x configs must be translated"},
		{"a Butane config, at its YAML lines", []string{"validate", "-files-dir", filepath.Dir(butane), butane}, "", 1, "error at $.storage.files.1.path, line 8 col 13: path not absolute"},
		{"a Butane config without its files dir", []string{"validate", butane}, "", 1, "error at $.storage.files.0.contents.local, line 7 col 16: local file paths are relative"},
		{"several files are prefixed", []string{"validate", valid, invalid}, "", 1, invalid + ": error at"},
		{"missing file", []string{"validate", "/nonexistent.ign"}, "", 1, ""},
		{"no file", []string{"validate"}, "", 2, ""},
		{"bad flag", []string{"validate", "-bogus", valid}, "", 2, ""},
		{"no command", nil, "", 2, ""},
		{"unknown command", []string{"frobnicate"}, "", 2, ""},
		{"version", []string{"version"}, "", 0, "3.7.0-experimental"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tt.wantCode {
				t.Errorf("run(%q) exit = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.wantCode, &stdout, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("run(%q) stdout = %q, want it to contain %q", tt.args, &stdout, tt.wantOut)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	invalid := writeConfig(t, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","mode":-1}]}}`)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"validate", "-json", invalid}, nil, &stdout, &stderr)
	if exitCode(err, &stderr) != 1 {
		t.Fatalf("run(validate -json) = %v, want exit 1", err)
	}
	var got []validateResult
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, &stdout)
	}
	if len(got) != 1 || got[0].Valid || got[0].Version != "3.4.0" || len(got[0].Entries) != 1 {
		t.Fatalf("run(validate -json) = %+v, want one invalid 3.4.0 result with one entry", got)
	}
	e := got[0].Entries[0]
	if e.Path != "$.storage.files.0.mode" || e.Line != 1 || e.Column != 73 {
		t.Errorf("entry = %+v, want $.storage.files.0.mode at line 1 col 73", e)
	}
}

// TestValidateMaxSize checks a config over the size limit is refused
// without being parsed, with an error naming the limit and the flag that
// raises it, from a file or stdin, and that the flag raises it.
func TestValidateMaxSize(t *testing.T) {
	body := `{"ignition":{"version":"3.4.0"}}` // 32 bytes
	valid := writeConfig(t, body)
	// A sparse file just over the default limit costs no disk (and is
	// read no further than the limit).
	huge := filepath.Join(t.TempDir(), "huge.ign")
	if err := os.WriteFile(huge, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, config.DefaultMaxSize+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		stdin     string
		wantCode  int
		wantError string
	}{
		{"at the limit", []string{"validate", "-max-size", "32", valid}, "", 0, ""},
		{"over the limit", []string{"validate", "-max-size", "31", valid}, "", 1,
			valid + ": config is too large: more than the limit of 31 bytes; -max-size raises the limit"},
		{"stdin over the limit", []string{"validate", "-max-size", "31", "-"}, body, 1,
			"stdin: config is too large: more than the limit of 31 bytes; -max-size raises the limit"},
		{"stdin at the limit", []string{"validate", "-max-size", "32", "-"}, body, 0, ""},
		{"the default limit", []string{"validate", huge}, "", 1, "more than the limit of 67108864 bytes"},
		{"raised", []string{"validate", "-max-size", "1K", valid}, "", 0, ""},
		{"not a size", []string{"validate", "-max-size", "lots", valid}, "", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tt.wantCode {
				t.Errorf("run(%q) exit = %d, want %d\nstderr: %s", tt.args, code, tt.wantCode, &stderr)
			}
			if !strings.Contains(stderr.String(), tt.wantError) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, &stderr, tt.wantError)
			}
		})
	}
}
