package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestCloudConfigCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.ign")
	none := filepath.Join(dir, "none.ign")
	partial := "#cloud-config\nchpasswd:\n  expire: false\n  users: [{name: root, password: hunter22, type: text}]\nchef: {}\n"
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantErr  string // in stderr
		version  string // the output's version on stdout; "-" for none
	}{
		{"complete", []string{"cloud-config", "-"}, "#cloud-config\ntimezone: UTC\n", 0, "none dropped", "3.6.0"},
		{"older spec, default user", []string{"cloud-config", "-spec", "3.0.0", "-default-user", "fedora", "-"}, "#cloud-config\nssh_authorized_keys: [ssh-ed25519 AAAA]\n", 0,
			"default user, fedora", "3.0.0"},
		{"errors write nothing", []string{"cloud-config", "-o", none, "-"}, partial, 1, "no config written", "-"},
		{"-allow-incomplete writes the rest", []string{"cloud-config", "-allow-incomplete", "-o", out, "-"}, partial, 1, "error at <stdin>:5: chef", ""},
		{"not user-data", []string{"cloud-config", "-"}, "hello\n", 1, "not cloud-config user-data", "-"},
		{"no file", []string{"cloud-config"}, "", 2, "give one user-data file", "-"},
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
			if strings.Contains(stderr.String(), "hunter22") {
				t.Errorf("stderr reveals the password:\n%s", stderr.String())
			}
			switch tt.version {
			case "":
			case "-":
				if stdout.Len() > 0 {
					t.Errorf("stdout has a config:\n%s", stdout.String())
				}
			default:
				if _, v, rep, err := config.ParseDeclared(stdout.Bytes()); err != nil || v.String() != tt.version {
					t.Errorf("stdout is not a valid %s config: %v, %s\n%s%s", tt.version, err, v, rep, stdout.String())
				}
			}
		})
	}
	if _, err := os.Stat(none); err == nil {
		t.Errorf("%s was written despite the errors", none)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("-o: %v", err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("-o file mode %v, want 0600", fi.Mode().Perm())
	}
	if _, _, rep, err := config.ParseDeclared(raw); err != nil || !strings.Contains(string(raw), `"passwordHash": "$6$`) {
		t.Errorf("-o wrote an invalid config or no hash: %v\n%s\n%s", err, rep, raw)
	}
}
