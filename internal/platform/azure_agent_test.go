package platform

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

func TestWireServerAddress(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"networkd lease": {
			files: map[string]string{"run/systemd/netif/leases/2": "# This is private data.\nADDRESS=10.0.0.4\nOPTION_245=A83F8110\n"},
			want:  "http://168.63.129.16",
		},
		"networkd lease, other fabric": {
			files: map[string]string{
				"run/systemd/netif/leases/1": "ADDRESS=192.168.1.2\n",
				"run/systemd/netif/leases/3": "OPTION_245=0A000001\n",
			},
			want: "http://10.0.0.1",
		},
		"dhclient lease": {
			files: map[string]string{"var/lib/dhclient/dhclient--eth0.lease": "lease {\n  interface \"eth0\";\n  option unknown-245 a:d:e:f;\n}\n"},
			want:  "http://10.13.14.15",
		},
		"malformed option": {
			files: map[string]string{"run/systemd/netif/leases/2": "OPTION_245=A83F81\n"},
			want:  "http://168.63.129.16",
		},
		"no lease": {want: "http://168.63.129.16"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tc.files {
				p = filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			host := &Host{Env: Env{Root: root, Logger: slog.New(slog.DiscardHandler)}, ID: "azure"}
			if got := host.wireServer(context.Background()); got != tc.want {
				t.Errorf("wireServer() = %s, want %s", got, tc.want)
			}
		})
	}
}

// The description is text in the document, whatever the reason holds.
func TestHealthDocumentEscapes(t *testing.T) {
	doc := string(healthDocument(goalState{"1", "c&1", "i<1"}, "NotReady", &details{"ProvisioningFailed", `mode "0644" < 0o777 & </Description>`}))
	for _, want := range []string{"<ContainerId>c&amp;1</ContainerId>", "<InstanceId>i&lt;1</InstanceId>",
		"<Description>mode &#34;0644&#34; &lt; 0o777 &amp; &lt;/Description&gt;</Description>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("health document lacks %s:\n%s", want, doc)
		}
	}
}

const (
	versionsXML = `<?xml version="1.0" encoding="utf-8"?>
<Versions>
  <Preferred><Version>2015-04-05</Version></Preferred>
  <Supported><Version>2015-04-05</Version><Version>2012-11-30</Version></Supported>
</Versions>`
	goalStateXML = `<?xml version="1.0" encoding="utf-8"?>
<GoalState xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <Version>2012-11-30</Version>
  <Incarnation>7</Incarnation>
  <Machine><ExpectedState>Started</ExpectedState></Machine>
  <Container>
    <ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>
    <RoleInstanceList>
      <RoleInstance>
        <InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId>
        <State>Started</State>
        <Configuration><SharedConfig>BASE/machine/x?comp=config&amp;type=sharedConfig</SharedConfig></Configuration>
      </RoleInstance>
    </RoleInstanceList>
  </Container>
</GoalState>`
	readyXML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
		`<GoalStateIncarnation>7</GoalStateIncarnation><Container><ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>` +
		`<RoleInstanceList><Role><InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId><Health><State>Ready</State></Health></Role>` +
		`</RoleInstanceList></Container></Health>`
	notReadyXML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
		`<GoalStateIncarnation>7</GoalStateIncarnation><Container><ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>` +
		`<RoleInstanceList><Role><InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId><Health><State>NotReady</State>` +
		`<Details><SubStatus>ProvisioningFailed</SubStatus><Description>stage files: fetching https://example.com/app.conf: HTTP status 403 Forbidden</Description></Details>` +
		`</Health></Role></RoleInstanceList></Container></Health>`
)

// wsRequest is one request the fake WireServer received.
type wsRequest struct {
	method, uri string
	header      http.Header
	body        string
}

// fakeService is a local service: it answers each route ("GET
// /path?query") with its handler, everything else with 404, and records
// every request.
type fakeService struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []wsRequest
	routes map[string]http.HandlerFunc
}

func newFakeService(t *testing.T, routes map[string]http.HandlerFunc) *fakeService {
	t.Helper()
	f := &fakeService{routes: routes}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, wsRequest{r.Method, r.RequestURI, r.Header.Clone(), string(body)})
		h := f.routes[r.Method+" "+r.RequestURI]
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// requests returns what the service received, in order.
func (f *fakeService) requests() []wsRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wsRequest(nil), f.reqs...)
}

// count returns how many requests hit "METHOD uri".
func (f *fakeService) count(route string) int {
	n := 0
	for _, r := range f.requests() {
		if r.method+" "+r.uri == route {
			n++
		}
	}
	return n
}

// answer replies with status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// failing answers failStatus the first n times, then as next does.
func failing(n, failStatus int, next http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n--
		fail := n >= 0
		mu.Unlock()
		if fail {
			w.WriteHeader(failStatus)
			return
		}
		next(w, r)
	}
}

// wireServerHost is the agent's host for id with its services at base,
// through the real fetcher with its retries shortened.
func wireServerHost(t *testing.T, id, base string) *Host {
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := resource.New(resource.Options{Logger: log, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	f.SetTotalTimeout(2 * time.Second)
	return &Host{Env: Env{Getter: f, Logger: log, Root: t.TempDir(), Endpoint: base}, ID: id, LocalPort: func() int { return 0 }}
}

// wireServer returns a fake WireServer whose health endpoint is health.
func wireServer(t *testing.T, health http.HandlerFunc) *fakeService {
	return newFakeService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":           answer(200, versionsXML),
		"GET /machine/?comp=goalstate":  answer(200, goalStateXML),
		"POST /machine/?comp=health":    health,
		"GET /machine/?comp=unexpected": answer(500, ""),
	})
}

// checkWireServerRequests checks the exchange: paths in order, the
// protocol headers on each, and the health document.
func checkWireServerRequests(t *testing.T, reqs []wsRequest, wantHealth string) {
	t.Helper()
	want := []string{"GET /?comp=versions", "GET /machine/?comp=goalstate", "POST /machine/?comp=health"}
	if len(reqs) != len(want) {
		t.Fatalf("WireServer got %d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, r := range reqs {
		if got := r.method + " " + r.uri; got != want[i] {
			t.Errorf("request %d = %s, want %s", i, got, want[i])
		}
		if v := r.header.Get("x-ms-version"); v != "2012-11-30" {
			t.Errorf("%s: x-ms-version = %q, want 2012-11-30", want[i], v)
		}
		if v := r.header.Get("x-ms-agent-name"); v != "flint" {
			t.Errorf("%s: x-ms-agent-name = %q, want flint", want[i], v)
		}
	}
	health := reqs[2]
	if ct := health.header.Get("Content-Type"); ct != "text/xml;charset=utf-8" {
		t.Errorf("health Content-Type = %q", ct)
	}
	if health.body != wantHealth {
		t.Errorf("health document =\n%s\nwant\n%s", health.body, wantHealth)
	}
}

func TestAzureCheckIn(t *testing.T) {
	for _, id := range []string{"azure", "azurestack"} {
		t.Run(id, func(t *testing.T) {
			ws := wireServer(t, answer(200, ""))
			host := wireServerHost(t, id, ws.srv.URL)
			if err := azureCheckIn(context.Background(), host); err != nil {
				t.Fatalf("azureCheckIn() = %v", err)
			}
			checkWireServerRequests(t, ws.requests(), readyXML)
		})
	}
}

// A WireServer still coming up answers 503 for a while: each request is
// retried with the fetcher's backoff.
func TestAzureCheckInRetriesTransientFailures(t *testing.T) {
	ws := newFakeService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":          failing(2, 503, answer(200, versionsXML)),
		"GET /machine/?comp=goalstate": failing(1, 500, answer(200, goalStateXML)),
		"POST /machine/?comp=health":   failing(2, 503, answer(200, "")),
	})
	host := wireServerHost(t, "azure", ws.srv.URL)
	if err := azureCheckIn(context.Background(), host); err != nil {
		t.Fatalf("azureCheckIn() = %v", err)
	}
	for route, want := range map[string]int{"GET /?comp=versions": 3, "GET /machine/?comp=goalstate": 2, "POST /machine/?comp=health": 3} {
		if n := ws.count(route); n != want {
			t.Errorf("%s requested %d times, want %d", route, n, want)
		}
	}
}

// A report refused with a 4xx (the goal state changed meanwhile) starts
// the whole exchange over, a bounded number of times.
func TestAzureHealthRefusedStartsOver(t *testing.T) {
	ws := wireServer(t, failing(1, http.StatusGone, answer(200, "")))
	host := wireServerHost(t, "azure", ws.srv.URL)
	if err := azureCheckIn(context.Background(), host); err != nil {
		t.Fatalf("azureCheckIn() = %v", err)
	}
	if n := ws.count("GET /machine/?comp=goalstate"); n != 2 {
		t.Errorf("goal state read %d times, want 2", n)
	}

	ws = wireServer(t, answer(http.StatusBadRequest, ""))
	host = wireServerHost(t, "azure", ws.srv.URL)
	err := azureCheckIn(context.Background(), host)
	var se *resource.StatusError
	if !errors.As(err, &se) || se.Status != 400 {
		t.Fatalf("azureCheckIn() = %v, want the 400", err)
	}
	if n := ws.count("POST /machine/?comp=health"); n != 3 {
		t.Errorf("health posted %d times, want the 3 attempts", n)
	}
}

func TestAzureProtocolErrors(t *testing.T) {
	for name, routes := range map[string]map[string]http.HandlerFunc{
		"old protocol only": {
			"GET /?comp=versions": answer(200, `<Versions><Preferred><Version>2010-01-01</Version></Preferred></Versions>`),
		},
		"goal state without container": {
			"GET /?comp=versions":          answer(200, versionsXML),
			"GET /machine/?comp=goalstate": answer(200, `<GoalState><Incarnation>1</Incarnation></GoalState>`),
		},
		"versions not XML": {
			"GET /?comp=versions": answer(200, `{"json": true}`),
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws := newFakeService(t, routes)
			host := wireServerHost(t, "azure", ws.srv.URL)
			if err := azureCheckIn(context.Background(), host); !errors.Is(err, ErrProtocol) {
				t.Fatalf("azureCheckIn() = %v, want ErrProtocol", err)
			}
			if n := ws.count("POST /machine/?comp=health"); n != 0 {
				t.Errorf("health posted %d times after a protocol error", n)
			}
		})
	}
}
