package report

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
)

// secrets are the values of every secret-bearing field of testConfig; none
// may leave the machine.
var secrets = []string{
	"$6$saltsalt$userhashuserhash", // a user's password hash
	"$6$grpsalt$grouphashgroup",    // a group's password hash
	"luks-key-material-42",         // a LUKS key file's content (data URL)
	"cred-user", "cred-pass",       // a URL's credentials
	"query-token-abc",          // a URL's query (presigned)
	"file-content-secret",      // a file's content (data URL)
	"append-content-secret",    // an append's content
	"Bearer header-secret-xyz", // an HTTP header's value
	"UNIT_SECRET_ENV",          // a unit's contents
	"dropin-secret-value",      // a drop-in's contents
	"proxy-pass-777",           // a proxy's password
	"ca-header-secret",         // a merged config's header value
	"merged-config-secret",     // a merged config's content
}

const testConfig = `{
  "ignition": {"version": "VERSION",
    "proxy": {"httpsProxy": "http://proxy:proxy-pass-777@proxy.example:3128"},
    "config": {"merge": [{"source": "data:,merged-config-secret", "httpHeaders": [{"name": "X-Key", "value": "ca-header-secret"}]}]}},
  "passwd": {
    "users": [{"name": "core", "passwordHash": "$6$saltsalt$userhashuserhash"}],
    "groups": [{"name": "wheel2", "passwordHash": "$6$grpsalt$grouphashgroup"}]},
  "storage": {
    "luks": [{"name": "data", "device": "/dev/vdb", "keyFile": {"source": "data:,luks-key-material-42"}}],
    "files": [
      {"path": "/etc/remote", "contents": {"source": "https://cred-user:cred-pass@files.example/blob?sig=query-token-abc",
        "httpHeaders": [{"name": "Authorization", "value": "Bearer header-secret-xyz"}]}},
      {"path": "/etc/inline", "contents": {"source": "data:,file-content-secret"},
       "append": [{"source": "data:,append-content-secret"}]}]},
  "systemd": {"units": [{"name": "a.service", "contents": "[Service]\nEnvironment=UNIT_SECRET_ENV\n[Install]\nWantedBy=multi-user.target\n",
    "dropins": [{"name": "b.conf", "contents": "[Service]\nEnvironment=X=dropin-secret-value\n"}]}]}
}`

// fixture writes the state file and the cache of a boot that failed in the
// files stage with an error quoting every secret.
func fixture(t *testing.T) (state, cache string, raw []byte) {
	t.Helper()
	dir := t.TempDir()
	raw = []byte(strings.Replace(testConfig, "VERSION", config.Newest.String(), 1))
	if _, err := config.ParseRendered(append([]byte(nil), raw...)); err != nil {
		t.Fatalf("ParseRendered(test config) = %v", err)
	}
	cache = filepath.Join(dir, "ignition.json")
	if err := os.WriteFile(cache, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := stages.State{
		FetchedConfigs: []stages.Fetched{{Kind: "base", Source: "system"}, {Kind: "user", Source: "cmdline"},
			{Kind: "user", Source: "https://cred-user:cred-pass@cfg.example/x.ign?token=query-token-abc", Referenced: true}},
		Stages: []stages.Record{
			{Name: "fetch-offline", Start: start, Duration: 12, Outcome: "success"},
			{Name: "fetch", Start: start.Add(time.Second), Duration: 340, Outcome: "success"},
			{Name: "files", Start: start.Add(2 * time.Second), Duration: 51, Outcome: "failure",
				Error: `file /etc/remote: https://cred-user:cred-pass@files.example/blob?sig=query-token-abc: HTTP status 403; ` +
					`hash $6$saltsalt$userhashuserhash and $6$grpsalt$grouphashgroup; key luks-key-material-42; ` +
					`data:,file-content-secret; append-content-secret; Bearer header-secret-xyz; UNIT_SECRET_ENV; ` +
					`dropin-secret-value; merged-config-secret; proxy http://proxy:proxy-pass-777@proxy.example:3128; ca-header-secret\nnext`},
		},
	}
	b, _ := json.Marshal(s)
	state = filepath.Join(dir, "state")
	if err := os.WriteFile(state, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return state, cache, raw
}

// collector records what was posted to it; the first fail answers are
// 503s.
type collector struct {
	mu     sync.Mutex
	fail   int
	bodies [][]byte
	types  []string
	paths  []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if c.fail > 0 {
		c.fail--
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	c.bodies = append(c.bodies, b)
	c.types = append(c.types, r.Header.Get("Content-Type"))
	c.paths = append(c.paths, r.URL.Path)
}

func newFetcher() Fetcher {
	return resource.New(resource.Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
}

func TestRunReportsFailureRedacted(t *testing.T) {
	state, cache, raw := fixture(t)
	c := &collector{fail: 2}
	srv := httptest.NewServer(c)
	defer srv.Close()
	cmdline := platform.Cmdline{{Key: ArgURL, Value: srv.URL + "/report"}}
	err := Run(context.Background(), Options{Outcome: Failure, Platform: "qemu", Version: "1.2.3", StateFile: state, ConfigCache: cache,
		Cmdline: cmdline, NewFetcher: newFetcher, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(c.bodies) != 1 {
		t.Fatalf("collector got %d reports, want 1 (after two 503s)", len(c.bodies))
	}
	body := string(c.bodies[0])
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("report holds the secret %q:\n%s", s, body)
		}
	}
	if c.types[0] != "application/json" || c.paths[0] != "/report" {
		t.Errorf("POST %s with Content-Type %q, want /report, application/json", c.paths[0], c.types[0])
	}
	var r map[string]any
	if err := json.Unmarshal(c.bodies[0], &r); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	sum := sha512.Sum512(raw)
	for k, want := range map[string]any{
		"schema": float64(1), "outcome": "failure", "platform": "qemu", "flintVersion": "1.2.3",
		"failedStage": "files", "configSha512": hex.EncodeToString(sum[:]),
	} {
		if r[k] != want {
			t.Errorf("report[%q] = %v, want %v", k, r[k], want)
		}
	}
	if _, ok := r["time"].(string); !ok {
		t.Errorf("report[time] = %v, want a time", r["time"])
	}
	st, _ := r["stages"].([]any)
	if len(st) != 3 {
		t.Fatalf("report[stages] = %v, want 3 stages", r["stages"])
	}
	last := st[2].(map[string]any)
	if last["name"] != "files" || last["outcome"] != "failure" || last["durationMs"] != float64(51) || last["start"] != "2026-12-01T10:00:02Z" {
		t.Errorf("report[stages][2] = %v, want files, failure, 51 ms, 10:00:02", last)
	}
	errText, _ := r["error"].(string)
	for _, want := range []string{"file /etc/remote: https://files.example/blob: HTTP status 403", "key REDACTED", "data URL", `\nnext`} {
		if !strings.Contains(errText, want) {
			t.Errorf("report[error] = %q, want it to hold %q", errText, want)
		}
	}
	cf, _ := r["configs"].([]any)
	if len(cf) != 3 || cf[2].(map[string]any)["source"] != "https://cfg.example/x.ign" {
		t.Errorf("report[configs] = %v, want 3, the referenced one https://cfg.example/x.ign", r["configs"])
	}
	if strings.Contains(body, "storage") || strings.Contains(body, "/etc/inline") {
		t.Errorf("report holds the config:\n%s", body)
	}
}

func TestBuildInfersOutcome(t *testing.T) {
	ok := stages.State{Stages: []stages.Record{{Name: "fetch", Outcome: "success"}}}
	for _, tt := range []struct {
		outcome string
		state   stages.State
		want    string
		failed  string
		errHas  string
	}{
		{"", ok, Success, "", ""},
		{"", stages.State{Stages: []stages.Record{{Name: "disks", Outcome: "failure", Error: "boom"}}}, Failure, "disks", "boom"},
		{Failure, ok, Failure, "", "no stage recorded a failure"},
	} {
		r := Build(Input{Outcome: tt.outcome, State: tt.state})
		if r.Outcome != tt.want || r.FailedStage != tt.failed || !strings.Contains(r.Error, tt.errHas) || r.Schema != Schema {
			t.Errorf("Build(%q, %+v) = %s, %q, %q, want %s, %q, holding %q", tt.outcome, tt.state.Stages, r.Outcome, r.FailedStage, r.Error, tt.want, tt.failed, tt.errHas)
		}
	}
}

func TestRunNothingAsked(t *testing.T) {
	called := false
	err := Run(context.Background(), Options{NewFetcher: func() Fetcher { called = true; return newFetcher() }})
	if err != nil || called {
		t.Errorf("Run without a URL = %v, fetcher made %v, want nil, false", err, called)
	}
}

func TestRunBoundedInTime(t *testing.T) {
	state, cache, _ := fixture(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	start := time.Now()
	err := Run(context.Background(), Options{StateFile: state, ConfigCache: cache, URL: srv.URL,
		NewFetcher: newFetcher, Timeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("Run against a collector that is down = nil, want an error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run with a 300 ms timeout took %s", d)
	}
}

func TestRedactorKeepsUnitWords(t *testing.T) {
	raw := strings.Replace(testConfig, "VERSION", config.Newest.String(), 1)
	cfg, err := config.ParseRendered([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	red := NewRedactor(cfg)
	for _, in := range []string{"Reached target multi-user.target", "[Service] section", "wheel2 core /etc/inline"} {
		if got := red.Value(in); got != in {
			t.Errorf("Value(%q) = %q, want it unchanged: nothing secret in it", in, got)
		}
	}
	if got := red.Value("env UNIT_SECRET_ENV and X=dropin-secret-value"); strings.Contains(got, "SECRET") || strings.Contains(got, "dropin-secret") {
		t.Errorf("Value(unit settings) = %q, want them hidden", got)
	}
}

func TestRedactorText(t *testing.T) {
	var r *Redactor // no config: the URL rules alone
	for _, tt := range []struct{ in, want string }{
		{"GET https://u:p@h.example/p?x=1: 404", "GET https://h.example/p: 404"},
		{"url=http://t@h/c.ign, then", "url=http://h/c.ign, then"},
		{"source data:,hello there", "source data URL there"},
		{"metadata: unreachable", "metadata: unreachable"},
		{"line\nbreak \x1b[2J", `line\nbreak \x1b[2J`},
	} {
		if got := r.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRunTrustsTheConfigsCA(t *testing.T) {
	c := &collector{}
	srv := httptest.NewTLSServer(c)
	defer srv.Close()
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	dir := t.TempDir()
	cache := filepath.Join(dir, "ignition.json")
	withCA := `{"ignition":{"version":"` + config.Newest.String() + `","security":{"tls":{"certificateAuthorities":[{"source":"data:;base64,` +
		base64.StdEncoding.EncodeToString(pemCert) + `"}]}}}}`
	for _, tt := range []struct {
		name, cache string
		ok          bool
	}{
		{"the config's CA", withCA, true},
		{"no CA", `{"ignition":{"version":"` + config.Newest.String() + `"}}`, false},
	} {
		os.WriteFile(cache, []byte(tt.cache), 0o600)
		err := Run(context.Background(), Options{Outcome: Success, StateFile: filepath.Join(dir, "state"), ConfigCache: cache,
			URL: srv.URL, NewFetcher: newFetcher, Timeout: 2 * time.Second})
		if (err == nil) != tt.ok {
			t.Errorf("Run over TLS with %s = %v, want success %v", tt.name, err, tt.ok)
		}
	}
	if len(c.bodies) != 1 {
		t.Errorf("collector got %d reports over TLS, want 1", len(c.bodies))
	}
}
