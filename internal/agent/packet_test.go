//go:build unix

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// packetService fakes metadata.packet.net with its phone-home endpoint on
// the same server.
func packetService(t *testing.T, phoneHome, events http.HandlerFunc) *platformtest.Service {
	f := platformtest.NewService(t, map[string]http.HandlerFunc{
		"POST /phone-home": phoneHome,
		"POST /events":     events,
	})
	doc := `{"id":"2c2c", "hostname":"worker-1", "plan":"c3.small.x86", "facility":"am6", "metro":"am",
		"ssh_keys":["` + testKeyOne + `", "` + testKeyTwo + `"],
		"phone_home_url":"` + f.URL + `/phone-home",
		"network":{"addresses":[
			{"address":"147.75.1.2","gateway":"147.75.1.1","public":true,"address_family":4},
			{"address":"2604:1380::2","gateway":"2604:1380::1","public":true,"address_family":6},
			{"address":"10.70.1.2","gateway":"10.70.1.1","public":false,"address_family":4}]}}`
	f.Handle("GET /metadata", func(w http.ResponseWriter, r *http.Request) {
		// The real service refuses the fetcher's default Accept header.
		if r.Header.Get("Accept") != "*/*" {
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		w.Write([]byte(doc))
	})
	return f
}

func TestPacketCheckIn(t *testing.T) {
	f := packetService(t, platformtest.Answer(200, ""), nil)
	a := newTestAgent(t, "packet", f.URL, t.TempDir())
	if err := a.CheckIn(context.Background()); err != nil {
		t.Fatalf("CheckIn() = %v", err)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || reqs[0].URI != "/metadata" || reqs[1].Method+" "+reqs[1].URI != "POST /phone-home" {
		t.Fatalf("requests = %+v, want GET /metadata then POST /phone-home", reqs)
	}
	if ct := reqs[1].Header.Get("Content-Type"); ct != "application/json" || reqs[1].Body != "" {
		t.Errorf("phone-home: Content-Type %q, body %q; want an empty JSON request", ct, reqs[1].Body)
	}
}

func TestPacketCheckInGivesUp(t *testing.T) {
	f := packetService(t, platformtest.Answer(502, ""), nil)
	a := newTestAgent(t, "packet", f.URL, t.TempDir())
	a.d.Getter = testFetcher(t, 100*time.Millisecond)
	err := a.CheckIn(context.Background())
	if !errors.Is(err, resource.ErrTimeout) {
		t.Fatalf("CheckIn() = %v, want ErrTimeout", err)
	}
	if n := f.Count("POST /phone-home"); n < 2 {
		t.Errorf("phoned home %d times, want retries", n)
	}
}

func TestPacketReportFailure(t *testing.T) {
	f := packetService(t, nil, platformtest.Answer(200, ""))
	a := newTestAgent(t, "packet", f.URL, t.TempDir())
	if err := a.ReportFailure(context.Background(), "stage disks: device /dev/sdb: no such device"); err != nil {
		t.Fatalf("ReportFailure() = %v", err)
	}
	if n := f.Count("POST /phone-home"); n != 0 {
		t.Errorf("a failed provisioning phoned home %d times", n)
	}
	reqs := f.Requests()
	ev := reqs[len(reqs)-1]
	if ev.Method+" "+ev.URI != "POST /events" {
		t.Fatalf("last request = %s %s, want POST /events", ev.Method, ev.URI)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(ev.Body), &got); err != nil {
		t.Fatalf("event %q: %v", ev.Body, err)
	}
	want := map[string]string{"state": "failed", "message": "flint: provisioning failed: stage disks: device /dev/sdb: no such device"}
	if len(got) != 2 || got["state"] != want["state"] || got["message"] != want["message"] {
		t.Errorf("event = %v, want %v", got, want)
	}
	if ct := ev.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("event Content-Type = %q", ct)
	}
}

func TestPacketNoPhoneHomeURL(t *testing.T) {
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata": platformtest.Answer(200, `{"hostname":"x"}`)})
	a := newTestAgent(t, "packet", f.URL, t.TempDir())
	if err := a.CheckIn(context.Background()); !errors.Is(err, ErrProtocol) {
		t.Fatalf("CheckIn() = %v, want ErrProtocol", err)
	}
}

// freePort returns a local TCP port nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Scaleway takes an HTTP PATCH of /state (coreos/afterburn
// src/providers/scaleway/mod.rs boot_checkin, asserted by its
// mock_tests.rs) and answers only privileged source ports; the test checks that
// the request comes from the port the agent picked (unprivileged here, so
// the test runs as any user).
func TestScalewayCheckIn(t *testing.T) {
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"PATCH /state": platformtest.Answer(200, "")})
	a := newTestAgent(t, "scaleway", f.URL, t.TempDir())
	port := freePort(t)
	a.d.LocalPort = func() int { return port }
	if err := a.CheckIn(context.Background()); err != nil {
		t.Fatalf("CheckIn() = %v", err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %+v, want one PATCH /state", reqs)
	}
	r := reqs[0]
	if r.Body != `{"state_detail":"booted"}` || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("state: body %q, Content-Type %q", r.Body, r.Header.Get("Content-Type"))
	}
	if r.RemotePort != strconv.Itoa(port) {
		t.Errorf("request came from port %s, want %d", r.RemotePort, port)
	}
}

func TestCheckInUnsupported(t *testing.T) {
	for _, id := range []string{"aws", "qemu", "gcp"} {
		a, err := New(Deps{}, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.CheckIn(context.Background()); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: CheckIn() = %v, want ErrUnsupported", id, err)
		}
		if err := a.ReportFailure(context.Background(), "x"); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: ReportFailure() = %v, want ErrUnsupported", id, err)
		}
	}
	if _, err := New(Deps{}, "nowhere"); !errors.Is(err, ErrUnknownPlatform) {
		t.Errorf("New(nowhere) = %v, want ErrUnknownPlatform", err)
	}
}
