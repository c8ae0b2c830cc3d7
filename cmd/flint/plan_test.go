package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestPlanCommand(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/motd"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	valid := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/issue","contents":{"source":"data:,hi"}}]}}`
	refused := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hi"}}]}}`
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"text", []string{"plan", "-root", root, "-"}, valid, 0, "create    file /etc/issue", ""},
		{"no root", []string{"plan", "-"}, valid, 0, "note: no -root", ""},
		{"refused exits 1", []string{"plan", "-root", root, "-"}, refused, 1,
			"error: file /etc/motd: exists and overwrite is false", ""},
		{"invalid config", []string{"plan", "-"}, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"etc/x"}]}}`, 1,
			"", "error at $.storage.files.0.path"},
		{"unknown disk", []string{"plan", "-disk", "/dev/vdz=x.img", "-"}, valid, 1, "", "-disk /dev/vdz"},
		{"bad -disk", []string{"plan", "-disk", "vda", "-"}, valid, 2, "", "want an absolute device path"},
		{"no config", []string{"plan"}, "", 2, "", "give one config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			code := exitCode(err, &stderr)
			if code != tt.wantCode || !strings.Contains(stdout.String(), tt.wantOut) || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("flint %s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout with %q, stderr with %q",
					strings.Join(tt.args, " "), code, stdout.String(), stderr.String(), tt.wantCode, tt.wantOut, tt.wantErr)
			}
		})
	}
}

func TestPlanCommandJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cfg := `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vdb","partitions":[{"label":"x"}]}]},
	  "kernelArguments":{"shouldExist":["quiet"]}}`
	if err := run(context.Background(), []string{"plan", "-json", "-"}, strings.NewReader(cfg), &stdout, &stderr); err != nil {
		t.Fatalf("flint plan -json: %v\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("flint plan -json printed no JSON: %v\n%s", err, stdout.String())
	}
	for _, key := range []string{"errors", "notes", "disks", "raid", "luks", "filesystems", "root", "nodes", "users", "groups", "units", "kernelArguments", "resources", "fetched"} {
		if _, ok := got[key]; !ok {
			t.Errorf("flint plan -json has no %q:\n%s", key, stdout.String())
		}
	}
	disks := got["disks"].([]any)
	if d := disks[0].(map[string]any); d["device"] != "/dev/vdb" || d["examined"] != false {
		t.Errorf("disks[0] = %v, want /dev/vdb, not examined", d)
	}
}

// TestPlanCommandFetch fetches from a server on 127.0.0.1 with the real
// fetcher: only with -fetch, and a wrong hash is an error.
func TestPlanCommandFetch(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	sum := sha256.Sum256([]byte("hello"))
	cfg := func(hash string) string {
		return `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/x","contents":{"source":"` +
			srv.URL + `/x","verification":{"hash":"sha256-` + hash + `"}}}]}}`
	}
	good, bad := cfg(hex.EncodeToString(sum[:])), cfg(strings.Repeat("0", 64))
	for _, c := range []struct {
		name     string
		args     []string
		cfg      string
		wantCode int
		wantOut  string
		wantHits int32
	}{
		{"not fetched", []string{"plan", "-"}, good, 0, "not fetched: use -fetch", 0},
		{"fetched", []string{"plan", "-fetch", "-"}, good, 0, "fetched, 5 bytes, hash matches", 1},
		{"wrong hash", []string{"plan", "-fetch", "-"}, bad, 1, "error: file /etc/x: fetching " + srv.URL + "/x", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			hits.Store(0)
			var stdout, stderr bytes.Buffer
			code := exitCode(run(context.Background(), c.args, strings.NewReader(c.cfg), &stdout, &stderr), &stderr)
			if code != c.wantCode || !strings.Contains(stdout.String(), c.wantOut) || hits.Load() != c.wantHits {
				t.Errorf("flint %s: exit %d, %d requests, stdout:\n%s\nstderr:\n%s\nwant exit %d, %d requests, stdout with %q",
					strings.Join(c.args, " "), code, hits.Load(), stdout.String(), stderr.String(), c.wantCode, c.wantHits, c.wantOut)
			}
		})
	}
}
