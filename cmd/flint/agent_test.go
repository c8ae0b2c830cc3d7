package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestAgentUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"agent"}, 2, "no command given"},
		{[]string{"agent", "-h"}, 0, "usage: flint agent"},
		{[]string{"agent", "frob"}, 2, `unknown command "frob"`},
		{[]string{"agent", "ssh-keys", "-platform", "aws"}, 2, "want one USER"},
		{[]string{"agent", "check-in", "-platform", "aws", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"agent", "check-in", "-platform", "nowhere"}, 2, "unknown platform"},
		{[]string{"agent", "check-in", "-platform", "aws", "-timeout", "0s"}, 2, "-timeout must be positive"},
		{[]string{"agent", "check-in", "-endpoint", "nourl"}, 2, "want an http(s) URL"},
		{[]string{"agent", "check-in", "-platform", "aws", "-log-to-stdout"}, 1, "not offered by this platform"},
		{[]string{"agent", "check-in", "-root", "/nonexistent", "-log-to-stdout"}, 1, "no platform named"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != tc.code {
			t.Errorf("flint %q: exit %d, want %d\n%s%s", tc.args, code, tc.code, &stdout, &stderr)
		}
		if out := stdout.String() + stderr.String(); !strings.Contains(out, tc.want) {
			t.Errorf("flint %q: output %q, want %q", tc.args, out, tc.want)
		}
	}
}

// The command end to end: the platform from /run/flint.env, the reason
// from a file, a fake Equinix Metal service.
func TestAgentReportFailureCommand(t *testing.T) {
	var mu sync.Mutex
	var events []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /metadata":
			fmt.Fprintf(w, `{"phone_home_url":"%s/phone-home"}`, srv.URL)
		case "POST /events":
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			events = append(events, string(body))
			mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "run"), 0o755)
	os.WriteFile(filepath.Join(root, "run/flint.env"), []byte("PLATFORM_ID=packet\n"), 0o644)
	args := []string{"agent", "report-failure", "-root", root, "-endpoint", srv.URL, "-reason-file", "-", "-log-to-stdout"}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, strings.NewReader("stage files: writing /etc/app.conf: permission denied\n"), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 0 {
		t.Fatalf("flint %q: exit %d\n%s%s", args, code, &stdout, &stderr)
	}
	want := `{"message":"flint: provisioning failed: stage files: writing /etc/app.conf: permission denied","state":"failed"}`
	if len(events) != 1 || events[0] != want {
		t.Errorf("events = %q, want [%s]", events, want)
	}
	if !strings.Contains(stdout.String(), "[finished] reporting the failed provisioning to packet") {
		t.Errorf("log does not show the report:\n%s", &stdout)
	}
}
