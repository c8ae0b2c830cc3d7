package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
