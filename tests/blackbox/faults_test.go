//go:build linux

package blackbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The cases here drive the fetch and files stages against servers that
// misbehave, and the files stage killed midway. They need no loop device;
// the files stage chowns as root, so they skip as any other user.

// runFor is machine.run with extra flags and a deadline: a stage that
// does not end by then is killed and the test fails.
func (m *machine) runFor(stage string, limit time.Duration, extra ...string) (int, string, time.Duration) {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"run",
		"--root=" + m.path("sysroot"),
		"--platform=file",
		"--stage=" + stage,
		"-config-cache", m.path("run/ignition.json"),
		"-state-file", m.path("run/ignition/state"),
		"-neednet", m.path("run/ignition/neednet"),
		"-log-to-stdout"}, extra...)
	cmd := exec.CommandContext(ctx, m.bin, args...)
	cmd.Dir = m.path("work")
	cmd.Env = m.env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	m.t.Logf("flint run --stage=%s (%v):\n%s", stage, took.Round(time.Millisecond), out)
	if ctx.Err() != nil {
		m.t.Fatalf("stage %s still running after %v: killed", stage, limit)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out), took
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out), took
	}
	m.t.Fatalf("running flint: %v", err)
	return -1, "", took
}

// filesMachine is a machine with an empty root, for the files stage.
func filesMachine(t *testing.T, bin, userConfig string) *machine {
	t.Helper()
	m := newMachine(t, bin, userConfig)
	if err := os.MkdirAll(m.path("sysroot"), 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the files stage chowns what it writes: needs root")
	}
}

// fileConfig is a config with one file at /etc/fetched from source.
func fileConfig(source, hash string) string {
	verification := ""
	if hash != "" {
		verification = fmt.Sprintf(`, "verification": {"hash": %q}`, hash)
	}
	return fmt.Sprintf(`{"ignition": {"version": "3.4.0"},
  "storage": {"files": [{"path": "/etc/fetched", "mode": 420, "contents": {"source": %q%s}}]}}`, source, verification)
}

// TestFetchFaultSecretsNeverShown fetches a file from a URL with a password
// and a token, from a server whose redirect's Location does not parse and
// carries secrets of its own: no line flint prints (log or error) may show
// any of them.
func TestFetchFaultSecretsNeverShown(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	const pw, token, loc = "pw-SECRET-bb1", "tok-SECRET-bb2", "loc-SECRET-bb3"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://admin:"+loc+"@exa mple.com/x?sig="+loc)
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	src := strings.Replace(srv.URL, "http://", "http://core:"+pw+"@", 1) + "/file?token=" + token
	m := filesMachine(t, bin, fileConfig(src, ""))
	if code, _, _ := m.runFor("fetch", time.Minute); code != 0 {
		t.Fatalf("fetch exit = %d, want 0", code)
	}
	code, out, _ := m.runFor("files", time.Minute)
	if code == 0 {
		t.Fatalf("files succeeded, want the redirect to fail it")
	}
	if !strings.Contains(out, "Location header that is not a valid URL") {
		t.Errorf("the output does not say what failed")
	}
	for _, s := range []string{pw, token, loc} {
		if strings.Contains(out, s) {
			t.Errorf("the output shows the secret %q", s)
		}
	}
}

// stallServer sends the headers and a little of every answer, then
// nothing, until the client gives up; it counts requests.
func stallServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestStalledDownloadEnds is a server that stops sending for good, and a
// config without httpTotal: the files stage fails after 3 attempts of the
// idle timeout, naming the source, whether the timeout comes from the
// flag or the kernel command line.
func TestStalledDownloadEnds(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	for _, c := range []struct {
		name    string
		karg    string
		flags   []string
		timeout time.Duration
	}{
		{name: "flag", flags: []string{"-fetch-idle-timeout", "1s"}, timeout: time.Second},
		{name: "kernel argument", karg: "flint.fetch_idle_timeout=2", timeout: 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, requests := stallServer(t)
			m := filesMachine(t, bin, fileConfig(srv.URL+"/big.img", ""))
			m.write("proc/cmdline", "root=LABEL=root ignition.firstboot ignition.platform.id=file "+c.karg+"\n")
			if code, _, _ := m.runFor("fetch", time.Minute); code != 0 {
				t.Fatalf("fetch exit = %d, want 0", code)
			}
			code, out, took := m.runFor("files", time.Minute, c.flags...)
			if code == 0 {
				t.Fatalf("files succeeded on a stalled download")
			}
			want := fmt.Sprintf("%s/big.img: transfer stalled: no data for %s", srv.URL, c.timeout)
			if !strings.Contains(out, want) || !strings.Contains(out, "gave up after 3 attempts") {
				t.Errorf("the output does not say %q and the attempts", want)
			}
			if got := requests.Load(); got != 3 {
				t.Errorf("server saw %d requests, want 3", got)
			}
			if took < 3*c.timeout || took > 3*c.timeout+20*time.Second {
				t.Errorf("files took %v, want about 3 × %v", took, c.timeout)
			}
			checkNoTemps(t, m.path("sysroot"))
		})
	}
}

// TestTruncatedDownloadRetried is a server whose first answer is cut
// short (its Content-Length promises more), then whole: the file lands
// whole, checked against its hash.
func TestTruncatedDownloadRetried(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	body := strings.Repeat("0123456789abcdef", 1<<14) // 256 KiB
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if n.Add(1) == 1 {
			w.Write([]byte(body[:len(body)/3]))
			return // the handler ends: the connection closes early
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	m := filesMachine(t, bin, fileConfig(srv.URL+"/file", sha512Of(body)))
	if code, _, _ := m.runFor("fetch", time.Minute); code != 0 {
		t.Fatalf("fetch exit = %d, want 0", code)
	}
	if code, _, _ := m.runFor("files", time.Minute); code != 0 {
		t.Fatalf("files exit = %d, want 0 after one retry", code)
	}
	got, err := os.ReadFile(m.path("sysroot/etc/fetched"))
	if err != nil || string(got) != body {
		t.Errorf("/etc/fetched has %d bytes (%v), want the %d of the whole body", len(got), err, len(body))
	}
	if n.Load() != 2 {
		t.Errorf("server saw %d requests, want 2", n.Load())
	}
	checkNoTemps(t, m.path("sysroot"))
}

// TestStaleTempsRemoved leaves in the root what a killed files stage
// leaves (a temporary file beside a path it writes), and look-alikes that
// are not flint's: only the first goes.
func TestStaleTempsRemoved(t *testing.T) {
	requireRoot(t)
	bin := buildFlint(t)
	m := filesMachine(t, bin, fileConfig("data:,hello", ""))
	stale := "sysroot/etc/.fetched.flint-0a1b2c3d4e5f"
	kept := []string{
		"sysroot/etc/.other.flint-0a1b2c3d4e5f",   // no entry writes /etc/other
		"sysroot/var/.fetched.flint-0a1b2c3d4e5f", // flint writes nothing in /var
		"sysroot/etc/.fetched.flint-0A1B2C3D4E5F", // not flint's pattern
		"sysroot/etc/.fetched.flint-0a1b2c3d4e",   // not flint's pattern
		"sysroot/etc/.fetched.flint-0a1b2c3d4e5f.bak",
	}
	for _, p := range append([]string{stale}, kept...) {
		m.write(p, "partial")
	}
	if code, _, _ := m.runFor("fetch", time.Minute); code != 0 {
		t.Fatalf("fetch exit = %d, want 0", code)
	}
	if code, _, _ := m.runFor("files", time.Minute); code != 0 {
		t.Fatalf("files exit = %d, want 0", code)
	}
	if m.exists(stale) {
		t.Errorf("%s stays", stale)
	}
	for _, p := range kept {
		if !m.exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
}

// largeConfig generates the benchmark's config (5,000 files in 50
// directories, 100 links, 200 units), without its users, as
// tests/bench/files_test.go runs it.
func largeConfig(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to generate the large config with: %v", err)
	}
	out := filepath.Join(t.TempDir(), "large.ign")
	cmd := exec.Command(goTool, "run", "./tests/bench/gen", "-o", out)
	cmd.Dir = filepath.Join("..", "..")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generating the config: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg, "passwd")
	raw, err = json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// rootTree describes every node under root but the result file (its date
// and boot id differ between runs): kind, mode, owner, contents or target.
func rootTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "etc/.ignition-result.json" {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%v %d:%d", info.Mode(), st.Uid, st.Gid)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			desc += " " + string(b)
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFilesStageKilledAndRerun kills the files stage with SIGKILL at a
// random point of the 5,000-file config, 9 times, each time in a fresh
// root, and runs it again: the second run must succeed and leave exactly
// what an uninterrupted run leaves (no file missing, none applied twice,
// no temporary file). FLINT_KILL_SEED replays a sequence of kill points
// (on a machine as loaded as the one that drew them).
func TestFilesStageKilledAndRerun(t *testing.T) {
	requireRoot(t)
	if testing.Short() {
		t.Skip("runs the files stage of the 5,000-file config 19 times")
	}
	bin := buildFlint(t)
	m := filesMachine(t, bin, largeConfig(t))
	if code, _, _ := m.runFor("fetch", 2*time.Minute); code != 0 {
		t.Fatalf("fetch exit = %d, want 0", code)
	}
	cache, err := os.ReadFile(m.path("run/ignition.json"))
	if err != nil {
		t.Fatal(err)
	}
	state, err := os.ReadFile(m.path("run/ignition/state"))
	if err != nil {
		t.Fatal(err)
	}

	// boot is one machine after the fetch stages: its own root and run
	// directory.
	boot := func(name string) (root, run string) {
		root = filepath.Join(m.dir, name, "sysroot")
		run = filepath.Join(m.dir, name, "run")
		for _, d := range []string{root, filepath.Join(run, "ignition")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(run, "ignition.json"), cache, 0o600)
		os.WriteFile(filepath.Join(run, "ignition", "state"), state, 0o600)
		return root, run
	}
	// A bound on every run: a stage that hangs fails the test instead.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	files := func(root, run string) *exec.Cmd { return filesStageCmd(ctx, bin, m.env, root, run) }

	root, run := boot("clean")
	start := time.Now()
	if out, err := files(root, run).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted files stage: %v\n%s", err, tail(out))
	}
	whole := time.Since(start)
	want := rootTree(t, root)
	os.RemoveAll(filepath.Dir(root))
	t.Logf("uninterrupted files stage: %v, %d nodes", whole.Round(time.Millisecond), len(want))

	rnd := killPoints(t)
	// A kill after the stage ended by itself kills nothing: such a try
	// does not count, and the next kill point is drawn within the
	// shorter time.
	kills, midway := 0, 0
	for try := 1; kills < 9; try++ {
		if try > 25 {
			t.Fatalf("only %d of 25 tries killed the stage: it ends too fast for the kill points", kills)
		}
		root, run := boot(fmt.Sprint("try", try))
		cmd := files(root, run)
		at := time.Duration(rnd.Int64N(int64(whole)))
		killed, ran := killAfter(t, cmd, at)
		if !killed {
			whole = min(whole, ran)
		}
		written := len(rootTree(t, root))
		if killed {
			kills++
			if written > 1 && written < len(want) {
				midway++
			}
		}
		out, err := files(root, run).CombinedOutput()
		if err != nil {
			t.Errorf("try %d, killed after %v (killed: %v, %d nodes there): the run after it failed: %v\n%s",
				try, at.Round(time.Millisecond), killed, written, err, tail(out))
			continue
		}
		diffs := compareTrees(t, fmt.Sprintf("try %d, killed after %v", try, at.Round(time.Millisecond)), rootTree(t, root), want)
		t.Logf("try %d: SIGKILL after %v (killed: %v, %d of %d nodes there): the run after it converged: %v",
			try, at.Round(time.Millisecond), killed, written, len(want), diffs == 0)
		os.RemoveAll(filepath.Dir(root))
	}
	t.Logf("%d kills, %d of them while the stage was writing the nodes", kills, midway)
	if midway == 0 {
		t.Errorf("no kill landed while the stage was writing the nodes: the test proved nothing")
	}
}

// killPoints is the random source of a kill test's kill points, seeded
// from FLINT_KILL_SEED when set (to replay a run), else from the clock;
// the seed is logged.
// filesStageCmd is the files stage of the rerun tests on the target root,
// with the cache, the state and the neednet flag under the run directory
// run, as a fresh /run of one boot.
func filesStageCmd(ctx context.Context, bin string, env []string, root, run string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, "run", "-platform", "file", "-stage", "files", "-root", root,
		"-config-cache", filepath.Join(run, "ignition.json"), "-state-file", filepath.Join(run, "ignition", "state"),
		"-neednet", filepath.Join(run, "ignition", "neednet"), "-log-to-stdout")
	cmd.Env = env
	return cmd
}

func killPoints(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLINT_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("kill points from FLINT_KILL_SEED=%d", seed)
	return rand.New(rand.NewPCG(seed, seed))
}

// killAfter starts cmd, sends it SIGKILL after at and waits for it. It
// says whether the signal killed it (false: it had ended by itself) and
// how long it ran.
func killAfter(t *testing.T, cmd *exec.Cmd, at time.Duration) (bool, time.Duration) {
	t.Helper()
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(at)
	cmd.Process.Kill()
	err := cmd.Wait()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL, time.Since(started)
}

// compareTrees reports, prefixed by what, the first five differences
// between two rootTree results, and returns how many it reported.
func compareTrees(t *testing.T, what string, got, want map[string]string) int {
	t.Helper()
	diffs := 0
	for k, v := range want {
		if got[k] != v && diffs < 5 {
			t.Errorf("%s: %s = %.60q, want %.60q", what, k, got[k], v)
			diffs++
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && diffs < 5 {
			t.Errorf("%s: %s is there, want nothing", what, k)
			diffs++
		}
	}
	return diffs
}

// tail is the end of a long output.
func tail(b []byte) string {
	if len(b) > 3000 {
		return "…" + string(b[len(b)-3000:])
	}
	return string(b)
}
