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

func TestKickstartCommand(t *testing.T) {
	dir := t.TempDir()
	ks := filepath.Join(dir, "ks.cfg")
	if err := os.WriteFile(ks, []byte("rootpw --plaintext hunter22\nlogvol / --vgname=vg --name=root\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.ign")
	none := filepath.Join(dir, "none.ign")
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantErr  string // in stderr
		version  string // the output's version, when one is written to stdout
	}{
		{"stdin, default spec", []string{"kickstart", "-"}, "lang C.UTF-8\n", 0, "", "3.6.0"},
		{"older spec", []string{"kickstart", "-spec", "3.0.0", "-"}, "bootloader --append=quiet\n", 0,
			"warning at <stdin>:1: bootloader --append needs spec 3.3.0", "3.0.0"},
		{"errors exit 1 and write nothing", []string{"kickstart", "-o", none, "-"}, "logvol / --vgname=vg --name=root\n", 1, "no config written", ""},
		{"errors to stdout write nothing", []string{"kickstart", "-"}, "lang C.UTF-8\nlogvol / --vgname=vg --name=root\n", 1, "error at <stdin>:2: logvol", "-"},
		{"-allow-incomplete writes the rest", []string{"kickstart", "-allow-incomplete", "-o", out, ks}, "", 1, "error at " + ks + ":2: logvol is not translatable", ""},
		{"-allow-incomplete to stdout", []string{"kickstart", "-allow-incomplete", "-"}, "lang C.UTF-8\n%pre\necho\n%end\n", 1, "error at <stdin>:2-4: %pre", "3.6.0"},
		{"unknown spec", []string{"kickstart", "-spec", "2.3.0", ks}, "", 2, "kickstart: -spec", ""},
		{"no file", []string{"kickstart"}, "", 2, "give one kickstart file", ""},
		{"missing file", []string{"kickstart", filepath.Join(dir, "none.ks")}, "", 1, "no such file", ""},
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
			if tt.version == "-" && stdout.Len() > 0 {
				t.Errorf("stdout has a config despite the errors:\n%s", stdout.String())
			}
			if tt.version != "" && tt.version != "-" {
				_, v, rep, err := config.ParseDeclared(stdout.Bytes())
				if err != nil || v.String() != tt.version {
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
		t.Errorf("-o file mode %v, want 0600 (it holds password hashes)", fi.Mode().Perm())
	}
	if _, _, rep, err := config.ParseDeclared(raw); err != nil || !strings.Contains(string(raw), `"passwordHash": "$6$`) {
		t.Errorf("-o wrote an invalid config or no hash: %v\n%s\n%s", err, rep, raw)
	}
}
