package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDownloadCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/streams/testing.json":
			w.Write([]byte(`{"architectures": {"aarch64": {"artifacts": {"qemu": {"formats": {"qcow2.xz": {"disk": {"location": "http://` + r.Host + `/img/q.qcow2.xz", "signature": "http://` + r.Host + `/img/q.qcow2.xz.sig"}}}}}}}}`))
		case "/img/q.qcow2.xz":
			w.Write([]byte("not really xz"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	args := []string{"download", "-s", "testing", "-a", "aarch64", "-p", "qemu", "-f", "qcow2.xz", "-C", dir, "--stream-base-url", srv.URL + "/streams/"}
	if _, _, err := flintRun(t, "", args...); err == nil || !strings.Contains(err.Error(), "--insecure not specified and signature not found") {
		t.Errorf("flint download of an unsigned image = %v, want upstream's refusal", err)
	}
	out, _, err := flintRun(t, "", append(args, "--insecure")...)
	want := filepath.Join(dir, "q.qcow2.xz")
	if err != nil || out != want+"\n" {
		t.Fatalf("flint download --insecure = %q, %v, want %s", out, err, want)
	}
	if b, _ := os.ReadFile(want); string(b) != "not really xz" {
		t.Errorf("%s = %q", want, b)
	}
	if _, _, err := flintRun(t, "", "download", "--fetch-retries", "some", "--stream-base-url", srv.URL+"/streams/"); err == nil || !strings.Contains(err.Error(), "--fetch-retries") {
		t.Errorf("download --fetch-retries some = %v, want a refusal", err)
	}
}
