package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/stages"
)

func TestReportCommand(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("report body %q: %v", b, err)
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	defer srv.Close()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	b, _ := json.Marshal(stages.State{Stages: []stages.Record{
		{Name: "fetch", Start: time.Now(), Duration: 5, Outcome: "success"},
		{Name: "disks", Start: time.Now(), Duration: 7, Outcome: "failure", Error: "device /dev/vdb: not found"},
	}})
	os.WriteFile(state, b, 0o600)
	cmdline := filepath.Join(dir, "cmdline")
	os.WriteFile(cmdline, []byte("ignition.platform.id=qemu flint.report.url="+srv.URL+"/boot\n"), 0o644)

	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("quiet ro\n"), 0o644)
	for _, tc := range []struct {
		args    []string
		usage   bool
		reports int
	}{
		{[]string{"report", "-outcome", "maybe"}, true, 0},
		{[]string{"report", "extra"}, true, 0},
		{[]string{"report", "-log-to-stdout", "-state-file", state, "-config-cache", filepath.Join(dir, "none"), "-cmdline", cmdline, "-outcome", "failure"}, false, 1},
		// Nothing asked for: nothing sent, success.
		{[]string{"report", "-log-to-stdout", "-state-file", state, "-cmdline", plain}, false, 1},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		var ue usageError
		if isUsage := errors.As(err, &ue); isUsage != tc.usage || (!tc.usage && err != nil) {
			t.Errorf("flint %s = %v, want usage error %v", strings.Join(tc.args, " "), err, tc.usage)
		}
		if len(got) != tc.reports {
			t.Errorf("after flint %s: %d reports, want %d", strings.Join(tc.args, " "), len(got), tc.reports)
		}
	}
	if len(got) == 1 {
		r := got[0]
		if r["schema"] != float64(1) || r["outcome"] != "failure" || r["platform"] != "qemu" || r["failedStage"] != "disks" || r["error"] != "device /dev/vdb: not found" {
			t.Errorf("report = %v, want schema 1, failure, qemu, disks and its error", r)
		}
	}
}
