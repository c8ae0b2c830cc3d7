package engine

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/fetch"
)

// providerFunc is a platform provider made of a function.
type providerFunc func(ctx context.Context, env platform.Env) ([]byte, error)

// harness is one machine: temp dirs for /run, /etc and /usr/lib config
// directories, a kernel command line, a platform "test", and a log kept
// for assertions (and sent to t.Log).
type harness struct {
	t    *testing.T
	dir  string
	opts Options
	logs *syncBuffer
	// calls counts the platform provider's calls.
	calls int
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	t   *testing.T
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t.Log(strings.TrimRight(string(p), "\n"))
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newHarness(t *testing.T, stage string, provide providerFunc) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, logs: &syncBuffer{t: t}}
	h.write("proc/cmdline", "quiet ro\n")
	h.opts = Options{
		Stage: stage,
		Platform: platform.Platform{ID: "test", New: func(env platform.Env) platform.Provider {
			return providerAdapter{h, env, provide}
		}},
		ConfigCache:  filepath.Join(dir, "run/ignition.json"),
		StateFile:    filepath.Join(dir, "run/ignition/state"),
		NeedNet:      filepath.Join(dir, "run/ignition/neednet"),
		FetchTimeout: 10 * time.Second,
		Logger:       slog.New(oplog.NewTextHandler(h.logs, slog.LevelDebug)),
		Version:      "test",
		ConfigDirs:   platform.ConfigDirs{Runtime: filepath.Join(dir, "run/ignition"), Local: filepath.Join(dir, "etc/ignition"), System: filepath.Join(dir, "usr/lib/ignition")},
		ProviderEnv:  platform.Env{Root: dir, Wait: 10 * time.Millisecond},
		NewFetcher: func(log *slog.Logger, offline bool) (Fetcher, error) {
			return resource.New(resource.Options{Logger: log, Offline: offline, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}), nil
		},
	}
	return h
}

type providerAdapter struct {
	h   *harness
	env platform.Env
	f   providerFunc
}

func (p providerAdapter) FetchConfig(ctx context.Context) ([]byte, error) {
	p.h.calls++
	return p.f(ctx, p.env)
}

// serve returns a platform provider that answers with body.
func serve(body string) providerFunc {
	return func(context.Context, platform.Env) ([]byte, error) { return []byte(body), nil }
}

func fail(err error) providerFunc {
	return func(context.Context, platform.Env) ([]byte, error) { return nil, err }
}

func (h *harness) write(rel, body string) {
	h.t.Helper()
	p := filepath.Join(h.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) run(stage string) error {
	h.t.Helper()
	o := h.opts
	o.Stage = stage
	return Run(context.Background(), o)
}

func (h *harness) mustRun(stage string) {
	h.t.Helper()
	if err := h.run(stage); err != nil {
		h.t.Fatalf("Run(%s) = %v", stage, err)
	}
}

// cache returns the cached config, parsed as the later stages read it.
func (h *harness) cache() config.Config {
	h.t.Helper()
	raw, err := os.ReadFile(h.opts.ConfigCache)
	if err != nil {
		h.t.Fatalf("reading the cache: %v", err)
	}
	var cfg config.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		h.t.Fatalf("cache is not JSON: %v", err)
	}
	return cfg
}

func (h *harness) state() stages.State {
	h.t.Helper()
	s, err := loadState(h.opts.StateFile)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) hasCache() bool   { return exists(h.opts.ConfigCache) }
func (h *harness) hasNeedNet() bool { return exists(h.opts.NeedNet) }

func sha512Hash(s string) string {
	sum := sha512.Sum512([]byte(s))
	return "sha512-" + hex.EncodeToString(sum[:])
}

func filePaths(cfg config.Config) []string {
	var paths []string
	for _, f := range cfg.Storage.Files {
		paths = append(paths, f.Path)
	}
	return paths
}

func TestUnknownStage(t *testing.T) {
	h := newHarness(t, "no-such-stage", serve(`{}`))
	err := h.run("no-such-stage")
	if !errors.Is(err, ErrUnknownStage) || !strings.Contains(err.Error(), "fetch-offline, fetch, kargs, disks") {
		t.Fatalf("Run(no-such-stage) = %v, want ErrUnknownStage listing the stages", err)
	}
	if !strings.HasPrefix(err.Error(), "stage no-such-stage: ") {
		t.Errorf("Run(no-such-stage) = %q, want the stage prefix like every other failure", err)
	}
}

func TestStages(t *testing.T) {
	if got := strings.Join(Stages(), " "); got != "fetch-offline fetch kargs disks mount files umount" {
		t.Errorf("Stages() = %q, want the stages in boot order", got)
	}
}

// The disks stage reads the cache fetch-offline wrote: the RAID array's
// members it names are waited for (with the engine's device timeout) and
// missing, which runs anywhere.
func TestDisksStageReadsTheCache(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0"},"storage":{"raid":[{"name":"md0","level":"raid1","devices":["/dev/flint-test-absent-x","/dev/flint-test-absent-y"]}]}}`))
	h.mustRun("fetch-offline")
	h.opts.DeviceTimeout = 50 * time.Millisecond
	err := h.run("disks")
	if err == nil || !strings.HasPrefix(err.Error(), "stage disks: raid md0: device /dev/flint-test-absent-x: device did not appear after waiting") {
		t.Fatalf("Run(disks) = %v, want the missing members of the array from the cache named", err)
	}

	h = newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0"}}`))
	h.mustRun("fetch-offline")
	h.mustRun("disks")
	if !strings.Contains(h.logs.String(), "nothing to do") {
		t.Errorf("the disks stage of an empty config did not say it had nothing to do:\n%s", h.logs.String())
	}
}

func TestFetchOfflineLocalConfig(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,%7B%22ignition%22%3A%7B%22version%22%3A%223.4.0%22%7D%2C%22storage%22%3A%7B%22files%22%3A%5B%7B%22path%22%3A%22%2Fmerged%22%7D%5D%7D%7D"}]}},
		"storage":{"files":[{"path":"/own","contents":{"source":"data:,hi"}}]}}`))
	h.mustRun("fetch-offline")
	if h.hasNeedNet() {
		t.Error("fetch-offline wrote the neednet flag for a config that needs no network")
	}
	if got := strings.Join(filePaths(h.cache()), " "); got != "/own /merged" {
		t.Errorf("cached files = %q, want /own /merged", got)
	}
	fi, err := os.Stat(h.opts.ConfigCache)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache mode = %v, %v, want 0600", fi.Mode(), err)
	}
	fi, err = os.Stat(filepath.Dir(h.opts.StateFile))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode = %v, %v, want 0700", fi.Mode(), err)
	}
	fi, err = os.Stat(h.opts.StateFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode = %v, %v, want 0600", fi.Mode(), err)
	}
	want := []stages.Fetched{{Kind: "user", Source: "test"}, {Kind: "user", Source: "data URL", Referenced: true}}
	if got := h.state().FetchedConfigs; !equalFetched(got, want) {
		t.Errorf("state fetchedConfigs = %+v, want %+v", got, want)
	}
	logs := h.logs.String()
	for _, s := range []string{
		`fetched user config from "test"`,
		"MESSAGE_ID=57124006b5c94805b77ce473e92a8aeb IGNITION_CONFIG_TYPE=user IGNITION_CONFIG_SRC=test IGNITION_CONFIG_REFERENCED=false",
		"fetch-offline: source: [finished] looking for the user config: cmdline",
		"fetch-offline: render: [finished] fetching referenced config data URL",
		"fetch-offline: stage finished",
	} {
		if !strings.Contains(logs, s) {
			t.Errorf("log lacks %q", s)
		}
	}
	if strings.Contains(logs, "%7B") {
		t.Error("log shows the data URL's contents")
	}

	// The unit for fetch is skipped when the cache exists; run anyway, it
	// does nothing.
	calls := h.calls
	h.mustRun("fetch")
	if h.calls != calls {
		t.Error("fetch asked the provider again although the config was cached")
	}
}

func equalFetched(a, b []stages.Fetched) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// remoteServer serves files by path and counts requests.
func remoteServer(t *testing.T, files map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchOfflineThenFetch(t *testing.T) {
	remote := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/remote","contents":{"source":"data:,from%20the%20server"}}]}}`
	srv := remoteServer(t, map[string]string{"/remote.ign": remote})
	tests := []struct {
		name    string
		hash    string
		wantErr string
	}{
		{"verified", sha512Hash(remote), ""},
		{"wrong hash", sha512Hash("something else"), "hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"` + srv.URL + `/remote.ign?token=s3cret","verification":{"hash":"` + tt.hash + `"}}]}}}`
			h := newHarness(t, "fetch-offline", serve(user))
			h.mustRun("fetch-offline")
			if !h.hasNeedNet() || h.hasCache() {
				t.Fatalf("after fetch-offline: neednet %v, cache %v; want the flag and no cache", h.hasNeedNet(), h.hasCache())
			}
			err := h.run("fetch")
			if strings.Contains(h.logs.String(), "s3cret") || (err != nil && strings.Contains(err.Error(), "s3cret")) {
				t.Error("the URL's token reached the log or the error")
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "stage fetch: ") {
					t.Fatalf("Run(fetch) = %v, want a failure about the %s", err, tt.wantErr)
				}
				if h.hasCache() {
					t.Error("a failed fetch left a cache")
				}
				return
			}
			if err != nil {
				t.Fatalf("Run(fetch) = %v", err)
			}
			cfg := h.cache()
			if got := strings.Join(filePaths(cfg), " "); got != "/remote" {
				t.Errorf("cached files = %q, want /remote", got)
			}
			want := []stages.Fetched{{Kind: "user", Source: "test"}, {Kind: "user", Source: srv.URL + "/remote.ign", Referenced: true}}
			if got := h.state().FetchedConfigs; !equalFetched(got, want) {
				t.Errorf("state fetchedConfigs = %+v, want %+v", got, want)
			}
		})
	}
}

func TestFetchOfflineNeedNetForLaterStages(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","contents":{"source":"https://example.com/a"}}]}}`))
	h.mustRun("fetch-offline")
	if !h.hasNeedNet() || !h.hasCache() {
		t.Fatalf("neednet %v, cache %v; want both (the config is local, the file is not)", h.hasNeedNet(), h.hasCache())
	}
}

func TestProviderNeedsNetwork(t *testing.T) {
	srv := remoteServer(t, map[string]string{"/user-data": `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/from-metadata"}]}}`})
	provide := func(ctx context.Context, env platform.Env) ([]byte, error) {
		return env.Getter.Get(ctx, resource.Request{URL: srv.URL + "/user-data"})
	}
	h := newHarness(t, "fetch-offline", provide)
	h.mustRun("fetch-offline")
	if !h.hasNeedNet() || h.hasCache() {
		t.Fatalf("neednet %v, cache %v; want the flag and no cache", h.hasNeedNet(), h.hasCache())
	}
	if strings.Contains(h.logs.String(), "[failed]") {
		t.Error("needing the network in fetch-offline was logged as a failure")
	}
	h.mustRun("fetch")
	if got := strings.Join(filePaths(h.cache()), " "); got != "/from-metadata" {
		t.Errorf("cached files = %q, want /from-metadata", got)
	}
}

func TestSources(t *testing.T) {
	const platformCfg = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/platform"}]}}`
	const systemCfg = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/system"}]}}`
	cmdlineCfg := "data:," + url.PathEscape(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/cmdline"}]}}`)
	tests := []struct {
		name     string
		cmdline  string
		userIgn  map[string]string
		platform providerFunc
		want     string // cached file paths
		wantErr  error
		wantSrc  string
	}{
		{name: "platform", platform: serve(platformCfg), want: "/platform", wantSrc: "test"},
		{name: "user.ign over platform", userIgn: map[string]string{"usr/lib/ignition": systemCfg}, platform: serve(platformCfg), want: "/system", wantSrc: "system"},
		{name: "cmdline over all", cmdline: "ignition.config.url=" + cmdlineCfg, userIgn: map[string]string{"etc/ignition": systemCfg}, platform: serve(platformCfg), want: "/cmdline", wantSrc: "cmdline"},
		{name: "no user config", platform: fail(platform.ErrNoConfig), want: ""},
		{name: "empty user-data", platform: serve(" \n"), want: ""},
		{name: "no source at all", platform: fail(platform.ErrNoProvider), wantErr: ErrNoSource},
		{name: "provider fails", platform: fail(errors.New("metadata service says no")), wantErr: errors.New("metadata service says no")},
		{name: "user config invalid", platform: serve(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"relative"}]}}`), wantErr: config.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "fetch-offline", tt.platform)
			if tt.cmdline != "" {
				h.write("proc/cmdline", tt.cmdline+"\n")
			}
			for dir, body := range tt.userIgn {
				h.write(filepath.Join(dir, "user.ign"), body)
			}
			err := h.run("fetch-offline")
			if tt.wantErr != nil {
				if err == nil || !(errors.Is(err, tt.wantErr) || strings.Contains(err.Error(), tt.wantErr.Error())) {
					t.Fatalf("Run() = %v, want %v", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "stage fetch-offline: ") {
					t.Errorf("Run() = %q, want the stage prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run() = %v", err)
			}
			cfg := h.cache()
			if got := strings.Join(filePaths(cfg), " "); got != tt.want {
				t.Errorf("cached files = %q, want %q", got, tt.want)
			}
			if cfg.Ignition.Version == "" {
				t.Error("cached config has no version")
			}
			var users []string
			for _, f := range h.state().FetchedConfigs {
				if f.Kind == "user" {
					users = append(users, f.Source)
				}
			}
			if got := strings.Join(users, " "); got != tt.wantSrc {
				t.Errorf("user configs recorded = %q, want %q", got, tt.wantSrc)
			}
		})
	}
}

// captureStages is the stage list with a fetch stage and a cache-reading
// stage that record the config they ran with.
func captureStages(got *config.Config) func(Options) []row {
	return func(o Options) []row {
		capture := captureStage{got}
		return []row{
			{name: "fetch-offline", offline: true, stage: then{fetch.Stage{Options: sources(o)}, capture}},
			{name: "files", stage: fetch.FromCache(sources(o), capture)},
		}
	}
}

// captureStage records the config it runs with.
type captureStage struct{ got *config.Config }

func (c captureStage) Run(_ context.Context, e *stages.Env) error {
	*c.got = e.Config
	return nil
}

// then runs one stage, then the other.
type then [2]stages.Stage

func (t then) Run(ctx context.Context, e *stages.Env) error {
	if err := t[0].Run(ctx, e); err != nil {
		return err
	}
	return t[1].Run(ctx, e)
}

func TestBaseConfigs(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/user"},{"path":"/shared","mode":384}]}}`))
	h.write("usr/lib/ignition/base.d/10-distro.ign", `{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/distro"},{"path":"/shared","mode":420}]}}`)
	h.write("usr/lib/ignition/base.d/20-site.ign", `{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/overridden"}]}}`)
	h.write("etc/ignition/base.d/20-site.ign", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/site"}]}}`)
	h.write("usr/lib/ignition/base.platform.d/test/platform.ign", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/platform-base"}]}}`)
	h.write("usr/lib/ignition/base.platform.d/other/other.ign", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/other-platform"}]}}`)

	var got config.Config
	o := h.opts
	if err := run(context.Background(), o, captureStages(&got)); err != nil {
		t.Fatalf("Run(fetch-offline) = %v", err)
	}
	if paths := strings.Join(filePaths(got), " "); paths != "/distro /shared /site /platform-base /user" {
		t.Errorf("full config files = %q, want base.d in name order, the platform's, then the user's", paths)
	}
	for _, f := range got.Storage.Files {
		if f.Path == "/shared" && (f.Mode == nil || *f.Mode != 384) {
			t.Errorf("/shared mode = %v, want the user config's 384", f.Mode)
		}
	}
	if paths := strings.Join(filePaths(h.cache()), " "); paths != "/user /shared" {
		t.Errorf("cached files = %q, want only the user config", paths)
	}
	if s := h.state().FetchedConfigs; len(s) == 0 || s[0] != (stages.Fetched{Kind: "base", Source: "system"}) {
		t.Errorf("state fetchedConfigs = %+v, want the base config first", s)
	}

	// Later stages read the cache and merge the base configs again.
	o.Stage = "files"
	got = config.Config{}
	if err := run(context.Background(), o, captureStages(&got)); err != nil {
		t.Fatalf("Run(files) = %v", err)
	}
	if paths := strings.Join(filePaths(got), " "); paths != "/distro /shared /site /platform-base /user" {
		t.Errorf("files stage config files = %q", paths)
	}

	// A broken base config fails every stage.
	h.write("run/ignition/base.d/30-broken.ign", `{"ignition":{"version":"3.4.0"`)
	err := run(context.Background(), o, captureStages(&got))
	if err == nil || !strings.Contains(err.Error(), "30-broken.ign") || !errors.Is(err, config.ErrSyntax) {
		t.Errorf("Run(files) with a broken base config = %v, want a syntax error naming the file", err)
	}
}

func TestCacheStageWithoutCache(t *testing.T) {
	h := newHarness(t, "files", serve(`{}`))
	var got config.Config
	err := run(context.Background(), h.opts, captureStages(&got))
	if !errors.Is(err, ErrNoCache) || !strings.HasPrefix(err.Error(), "stage files: ") {
		t.Fatalf("Run(files) without a cache = %v, want ErrNoCache", err)
	}
	if !strings.Contains(h.logs.String(), "CRITICAL files: stage failed") || !strings.Contains(h.logs.String(), "MESSAGE_ID="+StageFailedMessageID) {
		t.Error("the failure was not logged as critical with its MESSAGE_ID")
	}
	if h.calls != 0 {
		t.Error("a cache-reading stage asked the provider")
	}
}

func TestInvalidRenderedConfig(t *testing.T) {
	child := `{"ignition":{"version":"3.4.0"},"storage":{"links":[{"path":"/a","target":"/x"}]}}`
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,`+url.PathEscape(child)+`"}]}},"storage":{"files":[{"path":"/a/b"}]}}`))
	err := h.run("fetch-offline")
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "under the link /a") {
		t.Fatalf("Run() = %v, want ErrInvalidConfig with the reason", err)
	}
	if h.hasCache() {
		t.Error("an invalid config was cached")
	}
}

func TestRenderErrorHidesDataURL(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"data:,%7B%22passwd%22:%22SECRETHASH%22"}]}}}`))
	err := h.run("fetch-offline")
	if err == nil || !errors.Is(err, config.ErrSyntax) {
		t.Fatalf("Run() = %v, want a syntax error", err)
	}
	if strings.Contains(err.Error(), "SECRETHASH") || strings.Contains(h.logs.String(), "SECRETHASH") {
		t.Errorf("the data URL's contents reached the error or the log: %v", err)
	}
	if !strings.Contains(err.Error(), "ignition.config.merge.0 data URL") {
		t.Errorf("Run() = %v, want it to name the merge entry", err)
	}
}

func TestCertificateAuthoritiesInlined(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}))
	var caFetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caFetches.Add(1)
		io.WriteString(w, caPEM)
	}))
	t.Cleanup(srv.Close)
	user := `{"ignition":{"version":"3.4.0","security":{"tls":{"certificateAuthorities":[{"source":"` + srv.URL + `/ca.pem","verification":{"hash":"` + sha512Hash(caPEM) + `"}},{"source":"data:,` + url.PathEscape(caPEM) + `"}]}}}}`

	h := newHarness(t, "fetch", serve(user))
	h.mustRun("fetch")
	if n := caFetches.Load(); n != 1 {
		t.Errorf("the remote CA was fetched %d times, want once: the cache must hold the bundle the stage trusted", n)
	}
	cas := h.cache().Ignition.Security.TLS.CertificateAuthorities
	if len(cas) != 2 {
		t.Fatalf("cached CAs = %d, want 2", len(cas))
	}
	if !strings.HasPrefix(*cas[0].Source, "data:") || cas[0].Verification.Hash == nil {
		t.Fatalf("cached CA 0 = %s, want a data URL keeping its hash", *cas[0].Source)
	}
	var got bytes.Buffer
	f := resource.New(resource.Options{Offline: true})
	if err := f.Fetch(context.Background(), cas[0], &got); err != nil || got.String() != caPEM {
		t.Errorf("cached CA 0 holds %q (%v), want the PEM bundle", got.String(), err)
	}
	if *cas[1].Source != "data:,"+url.PathEscape(caPEM) {
		t.Errorf("cached CA 1 = %.40s…, want it unchanged", *cas[1].Source)
	}
}

func TestStateFileCorrupt(t *testing.T) {
	h := newHarness(t, "fetch-offline", serve(`{}`))
	h.write("run/ignition/state", "{not json")
	err := h.run("fetch-offline")
	if !errors.Is(err, ErrSetup) {
		t.Fatalf("Run() with a corrupt state file = %v, want ErrSetup", err)
	}
}

// recordingFetcher records the total timeouts it was given.
type recordingFetcher struct {
	*resource.Fetcher
	timeouts []time.Duration
}

func (f *recordingFetcher) SetTotalTimeout(d time.Duration) {
	f.timeouts = append(f.timeouts, d)
	f.Fetcher.SetTotalTimeout(d)
}

func TestFetchTimeoutAppliesToTheProvider(t *testing.T) {
	h := newHarness(t, "fetch", serve(`{"ignition":{"version":"3.4.0"}}`))
	var rec *recordingFetcher
	h.opts.FetchTimeout = 42 * time.Second
	h.opts.NewFetcher = func(log *slog.Logger, offline bool) (Fetcher, error) {
		rec = &recordingFetcher{Fetcher: resource.New(resource.Options{Logger: log, Offline: offline})}
		return rec, nil
	}
	h.mustRun("fetch")
	if len(rec.timeouts) != 1 || rec.timeouts[0] != 42*time.Second {
		t.Errorf("SetTotalTimeout calls = %v, want [42s]", rec.timeouts)
	}
}

func TestFetcherCreationFailure(t *testing.T) {
	h := newHarness(t, "fetch", serve(`{}`))
	h.opts.NewFetcher = func(*slog.Logger, bool) (Fetcher, error) { return nil, errors.New("no entropy") }
	if err := h.run("fetch"); !errors.Is(err, ErrSetup) {
		t.Fatalf("Run() = %v, want ErrSetup", err)
	}
}

// A URL without the scheme's slashes (https:user:password@host/x) has its
// credentials in the opaque part, which url.Parse does not split into
// userinfo; the logs, the state and the journal must not show them.
func TestOpaqueURLCredentialsHidden(t *testing.T) {
	for _, stage := range []string{"fetch-offline", "fetch"} {
		t.Run(stage, func(t *testing.T) {
			h := newHarness(t, stage, serve(`{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"https:admin:hunter2@127.0.0.1:1/x.ign"}]}}}`))
			err := h.run(stage)
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Run(%s) = %v, shows the password", stage, err)
			}
			if strings.Contains(h.logs.String(), "hunter2") {
				t.Errorf("Run(%s) logged the password", stage)
			}
			if raw, _ := os.ReadFile(h.opts.StateFile); strings.Contains(string(raw), "hunter2") {
				t.Errorf("Run(%s) wrote the password to the state file: %s", stage, raw)
			}
		})
	}
}

// TestSpec2Configs checks that a spec 2.x user config, and a 2.x config it
// appends, are translated at boot (2.x append is 3.x merge).
func TestSpec2Configs(t *testing.T) {
	child := `{"ignition":{"version":"2.1.0"},"networkd":{"units":[{"name":"00-eth0.network","contents":"[Match]\nName=eth0"}]}}`
	h := newHarness(t, "fetch-offline", serve(`{"ignition":{"version":"2.2.0","config":{"append":[{"source":"data:,`+url.PathEscape(child)+`"}]}},
		"storage":{"files":[{"filesystem":"root","path":"/own","contents":{"source":"data:,hi"}}]}}`))
	h.mustRun("fetch-offline")
	got := h.cache()
	if paths := strings.Join(filePaths(got), " "); paths != "/own /etc/systemd/network/00-eth0.network" {
		t.Fatalf("cached files = %q, want /own /etc/systemd/network/00-eth0.network", paths)
	}
	own := got.Storage.Files[0]
	if own.Overwrite == nil || !*own.Overwrite {
		t.Errorf("/own overwrite = %v, want true (2.x files overwrite)", own.Overwrite)
	}
}
