//go:build unix

package files

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/sys"
)

// pageServer serves pages by path, each after its delay, with its status
// (0: 200), and counts the requests for each; a request not in pages is a
// 404. seen(path, n) waits until path was asked for n times.
type pageServer struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]page
	hits  map[string]int
	hit   chan struct{} // a token per request
}

type page struct {
	body   string
	status int
	delay  time.Duration
}

func newPageServer(t *testing.T, pages map[string]page) *pageServer {
	ps := &pageServer{pages: pages, hits: map[string]int{}, hit: make(chan struct{}, 100)}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.hits[r.URL.Path]++
		p, ok := ps.pages[r.URL.Path]
		ps.mu.Unlock()
		ps.hit <- struct{}{}
		time.Sleep(p.delay)
		switch {
		case !ok:
			http.NotFound(w, r)
		case p.status != 0:
			w.WriteHeader(p.status)
		default:
			fmt.Fprint(w, p.body)
		}
	}))
	t.Cleanup(ps.Close)
	return ps
}

func (ps *pageServer) count(path string) int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.hits[path]
}

// seen waits (at most 5 s) until path was asked for n times.
func (ps *pageServer) seen(path string, n int) bool {
	deadline := time.After(5 * time.Second)
	for ps.count(path) < n {
		select {
		case <-ps.hit:
		case <-deadline:
			return false
		}
	}
	return true
}

// gatedRunner is the fake runner with, before each useradd, a wait that
// must succeed: the test's proof that a fetch happened while the users
// were made.
type gatedRunner struct {
	*fakeRunner
	before func() error
}

func (r gatedRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if name == "useradd" && r.before != nil {
		if err := r.before(); err != nil {
			return nil, &sys.CommandError{Argv: append([]string{name}, args...), ExitCode: 1, Stderr: err.Error()}
		}
	}
	return r.fakeRunner.Run(ctx, name, args...)
}

func sha512Of(s string) string {
	sum := sha512.Sum512([]byte(s))
	return "sha512-" + hex.EncodeToString(sum[:])
}

// httpFetcher is the stage's real fetcher, with short retries.
func httpFetcher() *resource.Fetcher {
	return resource.New(resource.Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
}

const userCore = `"passwd":{"users":[{"name":"core"}]},`

// TestPrefetchDuringUsers: with a user to make, the remote contents are
// fetched before useradd returns (the runner waits for the request), once,
// and land as without the prefetch.
func TestPrefetchDuringUsers(t *testing.T) {
	ps := newPageServer(t, map[string]page{"/index.html": {body: "<h1>hello</h1>\n"}})
	tg := newTarget(t)
	runner := gatedRunner{tg.runner, func() error {
		if !ps.seen("/index.html", 1) {
			return errors.New("the page was not asked for while the users were made")
		}
		return nil
	}}
	err := tg.run(`{`+userCore+`"storage":{"files":[
		{"path":"/srv/www/index.html","contents":{"source":"`+ps.URL+`/index.html","verification":{"hash":"`+sha512Of("<h1>hello</h1>\n")+`"}}},
		{"path":"/etc/hostname","contents":{"source":"data:,web-01"}}]}}`,
		func(d *Deps) { d.Fetcher, d.Runner = httpFetcher(), runner })
	if err != nil {
		t.Fatal(err)
	}
	tg.check(want{path: "srv/www/index.html", kind: "file", contents: "<h1>hello</h1>\n", uid: -1, gid: -1})
	tg.check(want{path: "etc/hostname", kind: "file", contents: "web-01", uid: -1, gid: -1})
	if n := ps.count("/index.html"); n != 1 {
		t.Errorf("the page was asked for %d times, want 1", n)
	}
	if !strings.Contains(tg.read("etc/passwd"), "core:") {
		t.Errorf("no user core in /etc/passwd")
	}
}

// TestPrefetchErrors: a fetch that fails is reported at its file's turn,
// with the same error as without a prefetch (no users), and the first
// failing file in the config's order is the one reported, whichever
// fetch failed first; a failing useradd is reported before any fetch's
// error, and nothing is written.
func TestPrefetchErrors(t *testing.T) {
	pages := map[string]page{
		"/slow-missing": {status: http.StatusNotFound, delay: 200 * time.Millisecond},
		"/bad-hash":     {body: "not what the hash says"},
		"/ok":           {body: "ok"},
	}
	files := func(url string) string {
		return `"storage":{"files":[
			{"path":"/a","contents":{"source":"` + url + `/slow-missing"}},
			{"path":"/b","contents":{"source":"` + url + `/bad-hash","verification":{"hash":"` + sha512Of("something else") + `"}}},
			{"path":"/c","contents":{"source":"` + url + `/ok"}}]}`
	}
	for _, tc := range []struct {
		name      string
		failUsers bool
		want      func(t *testing.T, err, without error)
	}{
		{"first in order", false, func(t *testing.T, err, without error) {
			if err == nil || err.Error() != without.Error() {
				t.Errorf("Run = %v, want %v (as without a prefetch)", err, without)
			}
			if !strings.Contains(fmt.Sprint(err), "file /a: contents:") {
				t.Errorf("Run = %v, want the error of /a, the first file", err)
			}
		}},
		{"users first", true, func(t *testing.T, err, _ error) {
			var ce *sys.CommandError
			if !errors.As(err, &ce) || ce.Argv[0] != "useradd" {
				t.Errorf("Run = %v, want useradd's error", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPageServer(t, pages)
			// Without users: no prefetch, today's error.
			plain := newTarget(t)
			without := plain.run(`{`+files(ps.URL)+`}`, func(d *Deps) { d.Fetcher = httpFetcher() })
			if without == nil {
				t.Fatal("Run without users succeeded")
			}
			tg := newTarget(t)
			runner := gatedRunner{tg.runner, func() error {
				// Both failing fetches are under way before the
				// users are made (each asked once more than in the
				// run without users).
				if !ps.seen("/slow-missing", 2) || !ps.seen("/bad-hash", 2) {
					return errors.New("the pages were not asked for while the users were made")
				}
				if tc.failUsers {
					return errors.New("useradd: cannot lock /etc/passwd")
				}
				return nil
			}}
			err := tg.run(`{`+userCore+files(ps.URL)+`}`, func(d *Deps) { d.Fetcher, d.Runner = httpFetcher(), runner })
			tc.want(t, err, without)
			for _, p := range []string{"a", "b", "c"} {
				tg.check(want{path: p, kind: "absent"})
			}
			assertNoTemps(t, tg.dir)
		})
	}
}

// TestPrefetchBudget: the prefetch holds no more than its budget; a file
// that does not fit in what is left is fetched again at its turn, and
// every file lands whole.
func TestPrefetchBudget(t *testing.T) {
	a, b := strings.Repeat("a", 3000), strings.Repeat("b", 3000)
	for _, tc := range []struct {
		name         string
		budget       int64
		hitsA, hitsB int
	}{
		{"both fit", 6000, 1, 1},
		{"second over", 4096, 1, 2},
		{"none fits", 1000, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPageServer(t, map[string]page{"/a": {body: a}, "/b": {body: b}})
			tg := newTarget(t)
			runner := gatedRunner{tg.runner, func() error {
				// One fetch at a time (Parallel 1): /b's prefetch
				// starts once /a's ended. Waiting for it makes sure
				// both ran before their files' turn.
				if !ps.seen("/b", 1) {
					return errors.New("/b was not asked for while the users were made")
				}
				return nil
			}}
			cfg := `{` + userCore + `"storage":{"files":[
				{"path":"/a","contents":{"source":"` + ps.URL + `/a"}},
				{"path":"/b","contents":{"source":"` + ps.URL + `/b"}}]}}`
			if tc.name == "none fits" {
				// /a's prefetch fails at once, then /b's runs.
				runner.before = func() error {
					if !ps.seen("/a", 1) || !ps.seen("/b", 1) {
						return errors.New("the pages were not asked for while the users were made")
					}
					return nil
				}
			}
			err := tg.run(cfg, func(d *Deps) {
				d.Fetcher, d.Runner, d.Parallel, d.prefetchBudget = httpFetcher(), runner, 1, tc.budget
			})
			if err != nil {
				t.Fatal(err)
			}
			tg.check(want{path: "a", kind: "file", contents: a, uid: -1, gid: -1})
			tg.check(want{path: "b", kind: "file", contents: b, uid: -1, gid: -1})
			if ga, gb := ps.count("/a"), ps.count("/b"); ga != tc.hitsA || gb != tc.hitsB {
				t.Errorf("requests for /a, /b = %d, %d, want %d, %d", ga, gb, tc.hitsA, tc.hitsB)
			}
		})
	}
}

// TestPrefetchBufferBound: what the prefetch buffers hold, and receive,
// never exceeds the budget, written in any pieces.
func TestPrefetchBufferBound(t *testing.T) {
	p := &prefetcher{left: 10}
	x, y := &prefetchBuffer{p: p}, &prefetchBuffer{p: p}
	steps := []struct {
		buf  *prefetchBuffer
		data string
		ok   bool
	}{{x, "abcd", true}, {y, "efgh", true}, {x, "ijk", false}, {y, "ij", true}, {x, "k", false}}
	for i, s := range steps {
		_, err := s.buf.Write([]byte(s.data))
		if (err == nil) != s.ok || (err != nil && !errors.Is(err, errPrefetchFull)) {
			t.Errorf("step %d: Write(%q) = %v, want ok %v", i, s.data, err, s.ok)
		}
	}
	if got := string(x.b) + "|" + string(y.b); got != "abcd|efghij" {
		t.Errorf("buffers = %q, want %q", got, "abcd|efghij")
	}
	// A rewind (a transfer started over) gives nothing back.
	if err := y.Rewind(0); err != nil {
		t.Fatal(err)
	}
	if _, err := y.Write([]byte("e")); !errors.Is(err, errPrefetchFull) {
		t.Errorf("Write after Rewind = %v, want %v: the budget counts what was received", err, errPrefetchFull)
	}
	if err := y.Rewind(1); err == nil {
		t.Errorf("Rewind(1) of an empty buffer succeeded")
	}
}

// TestNoPrefetch: nothing is fetched ahead without users or groups to
// make first, without a remote source (data URLs, no source, remote
// fragments are fetched at their turn), or for a file an earlier run
// applied.
func TestNoPrefetch(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		applied   string
		want      []string
	}{
		{"no users", `{"storage":{"files":[{"path":"/a","contents":{"source":"http://srv/a"}}]}}`, "", nil},
		{"no remote source", `{` + userCore + `"storage":{"files":[
			{"path":"/a","contents":{"source":"data:,x"}},{"path":"/b"},
			{"path":"/c","append":[{"source":"http://srv/c"}]},
			{"path":"/d","contents":{"source":"http://srv/d"},"append":[{"source":"tftp://srv/d"}]}]}}`, "", nil},
		{"remote", `{` + userCore + `"storage":{"files":[
			{"path":"/x/deep","contents":{"source":"http://srv/deep"}},
			{"path":"/a","contents":{"source":"data:,x"}},
			{"path":"/b","contents":{"source":"s3://bucket/b"},"append":[{"source":"data:,y"}]}]}}`, "", []string{"/b", "/x/deep"}},
		{"applied before", `{"passwd":{"groups":[{"name":"g"}]},"storage":{"files":[
			{"path":"/a","contents":{"source":"http://srv/a"}},
			{"path":"/b","contents":{"source":"http://srv/b"}}]}}`, "file /a", []string{"/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t)
			prog := &memProgress{done: map[string]bool{tc.applied: tc.applied != ""}}
			s, err := openStage(Deps{Config: parse(t, tc.cfg), Root: tg.dir, Fetcher: blockingFetcher{}, Runner: tg.runner, Progress: prog})
			if err != nil {
				t.Fatal(err)
			}
			defer s.root.Close()
			p := s.startPrefetch(context.Background(), PrefetchBudget)
			defer p.stop()
			var got []string
			if p != nil {
				for _, it := range p.items {
					got = append(got, it.f.Path)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("prefetched %q, want %q", got, tc.want)
			}
			if (p == nil) != (tc.want == nil) {
				t.Errorf("startPrefetch = %v, want nil %v", p, tc.want == nil)
			}
		})
	}
}

// blockingFetcher fetches nothing until its context ends.
type blockingFetcher struct{}

func (blockingFetcher) Fetch(ctx context.Context, _ config.Resource, _ io.Writer) error {
	<-ctx.Done()
	return ctx.Err()
}

// memProgress is a Progress in memory.
type memProgress struct{ done map[string]bool }

func (m *memProgress) Applied(e string) (bool, rootfs.FileID) { return m.done[e], rootfs.FileID{} }
func (m *memProgress) Pending(string, rootfs.FileID) error    { return nil }
func (m *memProgress) Done(e string) error                    { m.done[e] = true; return nil }
