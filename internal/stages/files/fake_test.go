//go:build unix

package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// fakeFetcher serves sources from a map. A source missing from it fails;
// a source in fail writes half its data, then fails (a connection lost,
// a hash mismatch found at the end). It records the most fetches it saw
// running at once.
type fakeFetcher struct {
	data  map[string]string
	fail  map[string]bool
	delay time.Duration
	// during runs a function while fetching a source (before its data).
	during  map[string]func()
	running atomic.Int32
	maxRun  atomic.Int32
	mu      sync.Mutex
	fetched []string
	// hostRun and hostMax count the fetches running at once by the
	// source's host, and the most seen.
	hostRun, hostMax map[string]int
}

func (f *fakeFetcher) Fetch(ctx context.Context, res config.Resource, w io.Writer) error {
	if res.Source == nil || *res.Source == "" {
		return nil
	}
	src := *res.Source
	f.mu.Lock()
	f.fetched = append(f.fetched, src)
	f.mu.Unlock()
	host := ""
	if u, err := url.Parse(src); err == nil {
		host = u.Host
	}
	f.mu.Lock()
	if f.hostRun == nil {
		f.hostRun, f.hostMax = map[string]int{}, map[string]int{}
	}
	f.hostRun[host]++
	f.hostMax[host] = max(f.hostMax[host], f.hostRun[host])
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.hostRun[host]--
		f.mu.Unlock()
	}()
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		m := f.maxRun.Load()
		if n <= m || f.maxRun.CompareAndSwap(m, n) {
			break
		}
	}
	if f.during != nil && f.during[src] != nil {
		f.during[src]()
	}
	if f.delay > 0 && !strings.HasPrefix(src, "data:") {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if strings.HasPrefix(src, "data:,") {
		d, err := url.PathUnescape(strings.TrimPrefix(src, "data:,"))
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, d)
		return err
	}
	d, ok := f.data[src]
	if !ok {
		return fmt.Errorf("%s: 404 not found", src)
	}
	if f.fail[src] {
		io.WriteString(w, d[:len(d)/2])
		return fmt.Errorf("%s: hash mismatch", src)
	}
	_, err := io.WriteString(w, d)
	return err
}

// fakeRunner records every command and acts like the tools on the
// target root: the shadow tools edit its /etc/passwd and /etc/group,
// cryptsetup luksUUID prints a UUID per device, setfiles keeps the list it
// was given, is-live-image says no.
type fakeRunner struct {
	root     string
	calls    [][]string
	relabels []string
	fail     map[string]bool
}

func (r *fakeRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	r.calls = append(r.calls, argv)
	if r.fail[name] {
		return nil, &sys.CommandError{Argv: argv, ExitCode: 1, Stderr: name + " failed"}
	}
	last := []string{""}
	if len(args) > 0 {
		last = args[len(args)-1:]
	}
	switch name {
	case "groupadd":
		gid := flagValue(args, "--gid", "3000")
		return nil, r.appendLine("etc/group", last[0]+":x:"+gid+":")
	case "useradd":
		uid := flagValue(args, "--uid", "2000")
		home := flagValue(args, "--home-dir", "/home/"+last[0])
		if err := r.appendLine("etc/passwd", last[0]+":x:"+uid+":"+uid+"::"+home+":/bin/sh"); err != nil {
			return nil, err
		}
		if !contains(args, "--no-create-home") {
			return nil, os.MkdirAll(filepath.Join(r.root, home), 0o700)
		}
		return nil, nil
	case "userdel", "groupdel":
		file := map[string]string{"userdel": "etc/passwd", "groupdel": "etc/group"}[name]
		return nil, r.dropLine(file, last[0])
	case "usermod", "groupmod":
		return nil, nil
	case "cryptsetup":
		return []byte("uuid-of-" + filepath.Base(last[0]) + "\n"), nil
	case "setfiles":
		list, err := os.ReadFile(flagValue(args, "-f", ""))
		if err != nil {
			return nil, err
		}
		r.relabels = strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00")
		return nil, nil
	case "is-live-image":
		return nil, &sys.CommandError{Argv: argv, ExitCode: 1}
	case "systemctl":
		return nil, &sys.CommandError{Argv: argv, ExitCode: 1}
	}
	return nil, fmt.Errorf("fake runner: unexpected command %s", name)
}

func (r *fakeRunner) appendLine(rel, line string) error {
	f, err := os.OpenFile(filepath.Join(r.root, rel), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	return err
}

func (r *fakeRunner) dropLine(rel, name string) error {
	p := filepath.Join(r.root, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var keep []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, name+":") {
			keep = append(keep, l)
		}
	}
	return os.WriteFile(p, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

// commands lists the recorded commands, one string each.
func (r *fakeRunner) commands() []string {
	var out []string
	for _, c := range r.calls {
		out = append(out, strings.Join(c, " "))
	}
	return out
}

func flagValue(args []string, flag, def string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return def
}

func contains(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// target is a temp root prepared like a distro's.
type target struct {
	t      *testing.T
	dir    string
	runner *fakeRunner
	fetch  *fakeFetcher
	logs   bytes.Buffer
}

func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{t: t, dir: t.TempDir()}
	tg.write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")
	tg.write("etc/group", "root:x:0:\nwheel:x:10:\n")
	tg.write("usr/lib/passwd", "sys:x:3:3::/:/sbin/nologin\n")
	tg.write("usr/lib/group", "sys:x:3:\n")
	tg.runner = &fakeRunner{root: tg.dir}
	tg.fetch = &fakeFetcher{data: map[string]string{}, fail: map[string]bool{}}
	return tg
}

func (tg *target) path(rel string) string { return filepath.Join(tg.dir, rel) }

func (tg *target) write(rel, body string) {
	tg.t.Helper()
	if err := os.MkdirAll(filepath.Dir(tg.path(rel)), 0o755); err != nil {
		tg.t.Fatal(err)
	}
	if err := os.WriteFile(tg.path(rel), []byte(body), 0o644); err != nil {
		tg.t.Fatal(err)
	}
}

func (tg *target) read(rel string) string {
	tg.t.Helper()
	b, err := os.ReadFile(tg.path(rel))
	if err != nil {
		tg.t.Fatal(err)
	}
	return string(b)
}

// run runs the stage on cfg (JSON of the newest spec, parsed by the
// config library).
func (tg *target) run(cfgJSON string, mod ...func(*Deps)) error {
	tg.t.Helper()
	cfg := parse(tg.t, cfgJSON)
	d := Deps{
		Config:  cfg,
		Logger:  slog.New(slog.NewTextHandler(&tg.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Root:    tg.dir,
		Fetcher: tg.fetch,
		Runner:  tg.runner,
		BootID:  func() (string, error) { return "boot-1", nil },
		Now:     func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
	for _, m := range mod {
		m(&d)
	}
	err := Run(context.Background(), d)
	tg.t.Logf("log:\n%s", tg.logs.String())
	return err
}

func parse(t *testing.T, body string) config.Config {
	t.Helper()
	if !strings.Contains(body, `"ignition"`) {
		rest := strings.TrimSpace(strings.TrimPrefix(body, "{"))
		if rest != "}" {
			rest = "," + rest
		}
		body = `{"ignition":{"version":"3.6.0"}` + rest
	}
	cfg, rep, err := config.Parse([]byte(body))
	if err != nil {
		t.Fatalf("config: %v\n%v", err, rep)
	}
	return cfg
}

var errAny = errors.New("any error")
