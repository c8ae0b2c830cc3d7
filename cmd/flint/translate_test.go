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

func TestTranslateCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.bu", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        local: motd\n")
	write("motd", "hello\n")
	warn := write("warn.bu", "variant: fcos\nversion: 1.5.0\nstorage:\n  filez: []\n")
	bad := write("bad.bu", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: etc/motd\n")
	out := filepath.Join(dir, "out.ign")
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantErr  string // in stderr
		version  string // the version of the config on stdout, if any
	}{
		{"stdin", []string{"translate"}, "variant: fcos\nversion: 1.4.0\n", 0, "", "3.3.0"},
		{"dash", []string{"translate", "-"}, "variant: fcos\nversion: 1.0.0\n", 0, "", "3.0.0"},
		{"files dir, long flags after the file", []string{"translate", good, "--files-dir", dir, "--pretty"}, "", 0, "", "3.4.0"},
		{"files dir, short flags", []string{"translate", "-d", dir, "-p", good}, "", 0, "", "3.4.0"},
		{"no files dir", []string{"translate", good}, "", 1, "error at $.storage.files.0.contents.local, line 7 col 16: local file paths are relative", ""},
		{"warnings pass", []string{"translate", warn}, "", 0, "warning at $.storage.filez, line 4 col 3: unused key filez", "3.4.0"},
		{"warnings fail with --strict", []string{"translate", "--strict", warn}, "", 1, "--strict", ""},
		{"warnings fail with -s", []string{"translate", "-s", warn}, "", 1, "--strict", ""},
		{"errors", []string{"translate", bad}, "", 1, "error at $.storage.files.0.path, line 5 col 13: path not absolute", ""},
		{"check writes nothing", []string{"translate", "-c", "-d", dir, good}, "", 0, "", ""},
		{"output file", []string{"translate", "-d", dir, "-o", out, good}, "", 0, "", ""},
		{"unknown version", []string{"translate"}, "variant: fcos\nversion: 9.9.9\n", 1, "no translator exists for variant fcos with version 9.9.9", ""},
		{"two files", []string{"translate", good, bad}, "", 2, "at most one file", ""},
		{"unknown flag", []string{"translate", "--nope"}, "", 2, "flag provided but not defined", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", stderr.String(), tt.wantErr)
			}
			if tt.version == "" {
				if tt.wantCode != 0 && stdout.Len() > 0 {
					t.Errorf("a failed translation wrote %q", stdout.String())
				}
				return
			}
			if !bytes.HasSuffix(stdout.Bytes(), []byte("}\n")) {
				t.Errorf("stdout does not end with a newline after the config: %q", stdout.String())
			}
			_, v, _, err := config.ParseDeclared(stdout.Bytes())
			if err != nil || v.String() != tt.version {
				t.Errorf("stdout is a %s config (%v), want %s:\n%s", v, err, tt.version, stdout.String())
			}
		})
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Errorf("-o wrote %q: %v", b, err)
	}
	if fi, err := os.Stat(out); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("-o wrote mode %v, want 0600", fi.Mode().Perm())
	}
}
