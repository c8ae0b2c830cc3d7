package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIgnitionApply applies configs to a temporary root through the
// container seam: never to the real /.
func TestIgnitionApply(t *testing.T) {
	const files = `"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"},"mode":420}],` +
		`"directories":[{"path":"/srv/data","mode":493}],"links":[{"path":"/etc/hello","target":"/etc/motd"}]}`
	const unit = `"systemd":{"units":[{"name":"demo.service","contents":"[Service]\nExecStart=/bin/true\n"}]}`
	for _, tc := range []struct {
		name       string
		config     string
		flags      []string
		host       bool // not in a container
		wantCode   int
		wantStderr string
		wantFiles  bool
	}{
		{name: "files and units", config: `{"ignition":{"version":"3.4.0"},` + files + `,` + unit + `}`, wantFiles: true},
		{name: "refused on a host", config: `{"ignition":{"version":"3.4.0"},` + files + `}`, host: true, wantCode: 1,
			wantStderr: "failed to apply: this tool is not designed to run on a host system; reprovision the machine instead\n"},
		{name: "kernel arguments refused", config: `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["quiet"]},` + files + `}`, wantCode: 1,
			wantStderr: "failed to apply: running stage 'kargs': cannot apply kargs modifications live\n"},
		{name: "disks refused", config: `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vdb","wipeTable":true}]}}`, wantCode: 1,
			wantStderr: "failed to apply: running stage 'disks': cannot apply disk modifications live\n"},
		{name: "filesystems refused", config: `{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[{"device":"/dev/vdb","format":"ext4","path":"/var"}]}}`, wantCode: 1,
			wantStderr: "failed to apply: running stage 'disks': cannot apply disk modifications live\n"},
		{name: "passwd refused", config: `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core"}]},` + files + `}`, wantCode: 1,
			wantStderr: "failed to apply: running stage 'files': cannot apply passwd live\n"},
		{name: "unsupported parts ignored", config: `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core"}]},"kernelArguments":{"shouldExist":["quiet"]},` + files + `,` + unit + `}`,
			flags: []string{"--ignore-unsupported"}, wantFiles: true},
		{name: "offline refuses remote contents", config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","contents":{"source":"https://example.com/a"}}]}}`,
			flags: []string{"--offline"}, wantCode: 1, wantStderr: "failed to apply: $.storage.files.0.contents"},
		{name: "invalid config", config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"etc/motd"}]}}`, wantCode: 1,
			wantStderr: "couldn't parse config: config is not valid\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "root")
			if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "config.ign")
			if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"--root", root}, tc.flags...), cfg)
			var stdout, stderr bytes.Buffer
			err := ignitionApply(context.Background(), args, nil, &stdout, &stderr, func() bool { return !tc.host })
			code := exitCode(err, &stderr)
			if code != tc.wantCode {
				t.Fatalf("ignition-apply %q exit = %d, want %d\nstdout: %s\nstderr: %s", args, code, tc.wantCode, &stdout, &stderr)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("ignition-apply %q stderr = %q, want it to contain %q", args, &stderr, tc.wantStderr)
			}
			got, err := os.ReadFile(filepath.Join(root, "etc/motd"))
			if tc.wantFiles != (err == nil) {
				t.Fatalf("ignition-apply %q: etc/motd read = %v, want written %v", args, err, tc.wantFiles)
			}
			if !tc.wantFiles {
				return
			}
			if string(got) != "hello" {
				t.Errorf("etc/motd = %q, want %q", got, "hello")
			}
			if fi, err := os.Stat(filepath.Join(root, "srv/data")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
				t.Errorf("srv/data = %v, %v; want a directory of mode 0755", fi, err)
			}
			if target, err := os.Readlink(filepath.Join(root, "etc/hello")); target != "/etc/motd" {
				t.Errorf("etc/hello -> %q (%v), want /etc/motd", target, err)
			}
			if _, err := os.Stat(filepath.Join(root, "etc/systemd/system/demo.service")); err != nil {
				t.Errorf("demo.service not written: %v", err)
			}
			// Nothing of a first boot's: no result file, no users.
			for _, p := range []string{"etc/.ignition-result.json", "etc/passwd"} {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("ignition-apply wrote %s, which only a first boot writes", p)
				}
			}
		})
	}
}

func TestIgnitionApplyCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{[]string{"--version"}, 0, ignitionVersion() + "\n", ""},
		{nil, 1, "", "Usage: ignition-apply [options] config.ign\nOptions:\n      --ignore-unsupported   ignore unsupported config sections\n"},
		{[]string{"a.ign", "b.ign"}, 1, "", "Usage: ignition-apply"},
		{[]string{"--root"}, 2, "", "flag needs an argument: --root\n"},
		{[]string{"-h"}, 0, "", `      --root string          root of the filesystem (default "/")`},
		{[]string{"--offline=maybe", "a.ign"}, 2, "", `invalid argument "maybe" for "--offline" flag: strconv.ParseBool: parsing "maybe": invalid syntax`},
	} {
		code, stdout, stderr := asTool(t, "ignition-apply", tc.args, "")
		if code != tc.wantCode || !strings.Contains(stdout, tc.wantStdout) || !strings.Contains(stderr, tc.wantStderr) {
			t.Errorf("ignition-apply %q = %d, %q, %q; want %d, %q, %q", tc.args, code, stdout, stderr, tc.wantCode, tc.wantStdout, tc.wantStderr)
		}
	}
}
