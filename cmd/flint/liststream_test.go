package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestListStream(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path != "/streams/stable.json" && r.URL.Path != "/streams/next.json" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"architectures": {
			"x86_64": {"artifacts": {"metal": {"formats": {"raw.xz": {"disk": {"location": "l", "signature": "s"}}, "4k.raw.xz": {"disk": {"location": "l", "signature": "s"}}}},
			                         "aws": {"formats": {"vmdk.xz": {"disk": {"location": "l", "signature": "s"}}}}}},
			"s390x": {"artifacts": {"metal": {"formats": {"raw.xz": {"disk": {"location": "l", "signature": "s"}}}}}}}}`))
	}))
	defer srv.Close()
	want := "" +
		"Architecture  Platform  Format\n" +
		"s390x         metal     raw.xz\n" +
		"x86_64        aws       vmdk.xz\n" +
		"x86_64        metal     4k.raw.xz\n" +
		"x86_64        metal     raw.xz\n"
	for _, tc := range []struct {
		args []string
		path string
	}{
		{[]string{"list-stream", "--stream-base-url", srv.URL + "/streams/"}, "/streams/stable.json"},
		{[]string{"list-stream", "-s", "next", "--stream-base-url", srv.URL + "/streams/"}, "/streams/next.json"},
		{[]string{"list-stream", "--stream", "next", "--stream-base-url=" + srv.URL + "/streams/"}, "/streams/next.json"},
	} {
		asked = nil
		out, errOut, err := flintRun(t, "", tc.args...)
		if err != nil || out != want || len(asked) != 1 || asked[0] != tc.path {
			t.Errorf("flint %v = %q, %q, %v (asked %v), want the table from %s", tc.args, out, errOut, err, asked, tc.path)
		}
	}
	_, _, err := flintRun(t, "", "list-stream", "-s", "gone", "--stream-base-url", srv.URL+"/streams/")
	if err == nil || !strings.Contains(err.Error(), "HTTP status client error (404 Not Found)") {
		t.Errorf("list-stream of a missing stream = %v, want the 404", err)
	}
	if _, errOut, err := flintRun(t, "", "list-stream", "--bogus"); err == nil || !strings.Contains(errOut, "--bogus") {
		t.Errorf("list-stream --bogus = %q, %v, want a usage error", errOut, err)
	}
}
