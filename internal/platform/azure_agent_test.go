package platform

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/platform/platformtest"
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

// wireServerHost is the agent's host for id with its services at base,
// through the real fetcher with its retries shortened.
func wireServerHost(t *testing.T, id, base string) *Host {
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := resource.New(resource.Options{Logger: log, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	f.SetTotalTimeout(2 * time.Second)
	return &Host{Env: Env{Getter: f, Logger: log, Root: t.TempDir(), Endpoint: base}, ID: id, LocalPort: func() int { return 0 }}
}

func TestAzureCheckIn(t *testing.T) {
	for _, id := range []string{"azure", "azurestack"} {
		t.Run(id, func(t *testing.T) {
			ws := platformtest.WireServer(t, platformtest.Answer(200, ""))
			host := wireServerHost(t, id, ws.URL)
			if err := azureCheckIn(context.Background(), host); err != nil {
				t.Fatalf("azureCheckIn() = %v", err)
			}
			platformtest.CheckWireServerRequests(t, ws.Requests(), platformtest.ReadyXML)
		})
	}
}

// A WireServer still coming up answers 503 for a while: each request is
// retried with the fetcher's backoff.
func TestAzureCheckInRetriesTransientFailures(t *testing.T) {
	ws := platformtest.NewService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":          platformtest.Failing(2, 503, platformtest.Answer(200, platformtest.VersionsXML)),
		"GET /machine/?comp=goalstate": platformtest.Failing(1, 500, platformtest.Answer(200, platformtest.GoalStateXML)),
		"POST /machine/?comp=health":   platformtest.Failing(2, 503, platformtest.Answer(200, "")),
	})
	host := wireServerHost(t, "azure", ws.URL)
	if err := azureCheckIn(context.Background(), host); err != nil {
		t.Fatalf("azureCheckIn() = %v", err)
	}
	for route, want := range map[string]int{"GET /?comp=versions": 3, "GET /machine/?comp=goalstate": 2, "POST /machine/?comp=health": 3} {
		if n := ws.Count(route); n != want {
			t.Errorf("%s requested %d times, want %d", route, n, want)
		}
	}
}

// A report refused with a 4xx (the goal state changed meanwhile) starts
// the whole exchange over, a bounded number of times.
func TestAzureHealthRefusedStartsOver(t *testing.T) {
	ws := platformtest.WireServer(t, platformtest.Failing(1, http.StatusGone, platformtest.Answer(200, "")))
	host := wireServerHost(t, "azure", ws.URL)
	if err := azureCheckIn(context.Background(), host); err != nil {
		t.Fatalf("azureCheckIn() = %v", err)
	}
	if n := ws.Count("GET /machine/?comp=goalstate"); n != 2 {
		t.Errorf("goal state read %d times, want 2", n)
	}

	ws = platformtest.WireServer(t, platformtest.Answer(http.StatusBadRequest, ""))
	host = wireServerHost(t, "azure", ws.URL)
	err := azureCheckIn(context.Background(), host)
	var se *resource.StatusError
	if !errors.As(err, &se) || se.Status != 400 {
		t.Fatalf("azureCheckIn() = %v, want the 400", err)
	}
	if n := ws.Count("POST /machine/?comp=health"); n != 3 {
		t.Errorf("health posted %d times, want the 3 attempts", n)
	}
}

func TestAzureProtocolErrors(t *testing.T) {
	for name, routes := range map[string]map[string]http.HandlerFunc{
		"old protocol only": {
			"GET /?comp=versions": platformtest.Answer(200, `<Versions><Preferred><Version>2010-01-01</Version></Preferred></Versions>`),
		},
		"goal state without container": {
			"GET /?comp=versions":          platformtest.Answer(200, platformtest.VersionsXML),
			"GET /machine/?comp=goalstate": platformtest.Answer(200, `<GoalState><Incarnation>1</Incarnation></GoalState>`),
		},
		"versions not XML": {
			"GET /?comp=versions": platformtest.Answer(200, `{"json": true}`),
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws := platformtest.NewService(t, routes)
			host := wireServerHost(t, "azure", ws.URL)
			if err := azureCheckIn(context.Background(), host); !errors.Is(err, ErrProtocol) {
				t.Fatalf("azureCheckIn() = %v, want ErrProtocol", err)
			}
			if n := ws.Count("POST /machine/?comp=health"); n != 0 {
				t.Errorf("health posted %d times after a protocol error", n)
			}
		})
	}
}
