//go:build linux

// Package blackbox runs the flint binary as the distro's units do and
// checks what it leaves behind. The fetch stages need no root: they only
// fetch, render and cache the config; the disk and file stages' cases
// (root, loop devices) join them as those stages land.
package blackbox

import (
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestMain builds flint once for every test and removes it afterwards.
func TestMain(m *testing.M) {
	code := m.Run()
	if dir := builtDir.Load(); dir != nil {
		os.RemoveAll(*dir)
	}
	os.Exit(code)
}

// builtDir is the temp dir holding the binary, once built.
var builtDir atomic.Pointer[string]

// build builds cmd/flint once, as the Makefile does (static), and reports
// the binary or why it could not be built; a missing go tool is a reason to
// skip, a failing build is not. $FLINT_BLACKBOX_FLINT names a prebuilt
// binary instead: the VM tier runs this tier in a guest without Go.
var build = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("FLINT_BLACKBOX_FLINT"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("FLINT_BLACKBOX_FLINT: %w", err)
		}
		return bin, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: no go tool to build flint with: %v", errSkip, err)
	}
	dir, err := os.MkdirTemp("", "flint-blackbox-")
	if err != nil {
		return "", err
	}
	builtDir.Store(&dir)
	bin := filepath.Join(dir, "flint")
	// The shipped build tags (the Makefile's TAGS): HTTP/1.1 only.
	cmd := exec.Command(goTool, "build", "-tags", "nethttpomithttp2", "-trimpath", "-o", bin, "./cmd/flint")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/flint: %v\n%s", err, out)
	}
	return bin, nil
})

var errSkip = errors.New("skip")

// buildFlint returns the flint binary, skipping the test when it cannot
// be built here.
func buildFlint(t *testing.T) string {
	t.Helper()
	bin, err := build()
	if errors.Is(err, errSkip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// asIgnition returns flint under Ignition's name: a symlink named
// ignition to bin, as a distro that keeps Ignition's units installs it.
// A machine whose bin is such a link runs its stages with Ignition's
// command line (stageArgv): the tier's second pass.
func asIgnition(t *testing.T, bin string) string {
	t.Helper()
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "ignition")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// stageArgv is the command line that runs stage on the machine: flint's
// (`flint run ...`, with flint's extra flags), or, when the binary is
// named ignition, Ignition's own (coreos/ignition internal/main.go:
// --root, --platform, --stage, --config-cache, --state-file, --neednet,
// --fetch-timeout, --log-to-stdout; nothing of flint's), as Ignition's
// units run it.
func (m *machine) stageArgv(stage string, flintOnly ...string) []string {
	if filepath.Base(m.bin) == "ignition" {
		return []string{
			"--root=" + m.path("sysroot"),
			"--platform=file",
			"--stage=" + stage,
			"--config-cache=" + m.path("run/ignition.json"),
			"--state-file=" + m.path("run/ignition/state"),
			"--neednet=" + m.path("run/ignition/neednet"),
			"--fetch-timeout=20s",
			"--log-to-stdout",
		}
	}
	return append([]string{"run",
		"--root=" + m.path("sysroot"),
		"--platform=file",
		"--stage=" + stage,
		"-config-cache", m.path("run/ignition.json"),
		"-state-file", m.path("run/ignition/state"),
		"-neednet", m.path("run/ignition/neednet"),
		"-fetch-timeout", "20s",
		"-log-to-stdout"}, flintOnly...)
}

// machine is the files one boot of flint sees, all under a temp dir.
type machine struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func newMachine(t *testing.T, bin, userConfig string) *machine {
	t.Helper()
	m := &machine{t: t, bin: bin, dir: t.TempDir()}
	m.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=LABEL=root ignition.firstboot ignition.platform.id=file\n")
	m.write("work/config.ign", userConfig)
	m.env = append(os.Environ(),
		"IGNITION_CONFIG_FILE="+m.path("work/config.ign"),
		"IGNITION_KERNEL_CMDLINE_PATH="+m.path("proc/cmdline"),
		"IGNITION_SYSTEM_CONFIG_DIR="+m.path("usr/lib/ignition"),
		"IGNITION_SYSTEM_LOCAL_CONFIG_DIR="+m.path("etc/ignition"),
		"IGNITION_SYSTEM_RUNTIME_CONFIG_DIR="+m.path("run/ignition"),
	)
	return m
}

func (m *machine) path(rel string) string { return filepath.Join(m.dir, rel) }

func (m *machine) write(rel, body string) {
	m.t.Helper()
	if err := os.MkdirAll(filepath.Dir(m.path(rel)), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(m.path(rel), []byte(body), 0o600); err != nil {
		m.t.Fatal(err)
	}
}

func (m *machine) exists(rel string) bool {
	_, err := os.Stat(m.path(rel))
	return err == nil
}

// run runs one stage as a unit would, with Ignition's flags pointed
// into the machine, and returns the exit status and the output.
func (m *machine) run(stage string) (int, string) {
	m.t.Helper()
	cmd := exec.Command(m.bin, m.stageArgv(stage)...)
	cmd.Dir = m.path("work")
	cmd.Env = m.env
	out, err := cmd.CombinedOutput()
	m.t.Logf("%s --stage=%s:\n%s", filepath.Base(m.bin), stage, out)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	m.t.Fatalf("running flint: %v", err)
	return -1, ""
}

// server serves remote configs on 127.0.0.1 and counts requests.
func server(t *testing.T, files map[string]string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func sha512Of(s string) string {
	sum := sha512.Sum512([]byte(s))
	return "sha512-" + hex.EncodeToString(sum[:])
}

// mergingConfig is a user config that merges the config at url, verified
// by hash, and has a file of its own.
func mergingConfig(url, hash string) string {
	return fmt.Sprintf(`{
  "ignition": {
    "version": "3.4.0",
    "config": {"merge": [{"source": %q, "verification": {"hash": %q}}]}
  },
  "storage": {"files": [{"path": "/etc/local", "contents": {"source": "data:,from%%20config.ign"}}]}
}`, url, hash)
}

const remoteConfig = `{
  "ignition": {"version": "3.2.0"},
  "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJsYWNrYm94IHRlc3Qga2V5IG9ubHkgbm90IGEgcmVhbCBrZXk= test"]}]},
  "storage": {"files": [{"path": "/etc/remote", "mode": 420, "contents": {"source": "data:,from%20the%20server"}}]}
}`

func TestFetchStagesAgainstLocalServer(t *testing.T) {
	bin := buildFlint(t)
	t.Run("flint", func(t *testing.T) { fetchStagesAgainstLocalServer(t, bin) })
	t.Run("ignition", func(t *testing.T) { fetchStagesAgainstLocalServer(t, asIgnition(t, bin)) })
}

func fetchStagesAgainstLocalServer(t *testing.T, bin string) {
	srv, requests := server(t, map[string]string{"/configs/remote.ign": remoteConfig})
	m := newMachine(t, bin, mergingConfig(srv.URL+"/configs/remote.ign", sha512Of(remoteConfig)))

	// fetch-offline: the merge needs the network, so only the flag.
	if code, out := m.run("fetch-offline"); code != 0 {
		t.Fatalf("fetch-offline exit = %d, want 0\n%s", code, out)
	}
	if !m.exists("run/ignition/neednet") {
		t.Error("fetch-offline did not write the neednet flag")
	}
	if m.exists("run/ignition.json") {
		t.Error("fetch-offline wrote a cache although the config needs the network")
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("fetch-offline made %d requests, want none", n)
	}

	// fetch: the network is up; the merged config is cached.
	code, out := m.run("fetch")
	if code != 0 {
		t.Fatalf("fetch exit = %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "MESSAGE_ID=57124006b5c94805b77ce473e92a8aeb IGNITION_CONFIG_TYPE=user") {
		t.Error(`fetch did not log the "config fetched" entry`)
	}
	fi, err := os.Stat(m.path("run/ignition.json"))
	if err != nil {
		t.Fatalf("fetch left no cache: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("cache mode = %v, want 0600", fi.Mode().Perm())
	}
	raw, err := os.ReadFile(m.path("run/ignition.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, report, err := config.Parse(raw)
	if err != nil {
		t.Fatalf("config.Parse(cache) = %v\n%s\n%s", err, report, raw)
	}
	var paths []string
	for _, f := range cfg.Storage.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "/etc/local /etc/remote" {
		t.Errorf("cached files = %q, want /etc/local /etc/remote", got)
	}
	if len(cfg.Passwd.Users) != 1 || cfg.Passwd.Users[0].Name != "core" || len(cfg.Passwd.Users[0].SSHAuthorizedKeys) != 1 {
		t.Errorf("cached users = %+v, want core with the remote config's key", cfg.Passwd.Users)
	}
	state, err := os.ReadFile(m.path("run/ignition/state"))
	if err != nil || !strings.Contains(string(state), `"referenced":true`) {
		t.Errorf("state file = %s (%v), want the referenced config recorded", state, err)
	}

	// The unit for fetch has ConditionPathExists=!/run/ignition.json; run
	// again anyway: nothing is fetched twice.
	before := requests.Load()
	if code, out := m.run("fetch"); code != 0 {
		t.Fatalf("second fetch exit = %d\n%s", code, out)
	}
	if requests.Load() != before {
		t.Error("a second fetch fetched again although the config was cached")
	}
}

func TestFetchExitCodes(t *testing.T) {
	bin := buildFlint(t)
	srv, _ := server(t, map[string]string{"/configs/remote.ign": remoteConfig})

	t.Run("hash mismatch fails the stage", func(t *testing.T) {
		m := newMachine(t, bin, mergingConfig(srv.URL+"/configs/remote.ign", sha512Of("not what the server sends")))
		code, out := m.run("fetch")
		if code != 1 || !strings.Contains(out, "stage fetch: ") || !strings.Contains(out, "hash") {
			t.Errorf("fetch exit = %d, want 1 with a hash error naming the stage", code)
		}
		if m.exists("run/ignition.json") {
			t.Error("a failed fetch left a cache")
		}
	})
	t.Run("unknown stage is a usage error", func(t *testing.T) {
		m := newMachine(t, bin, "{}")
		if code, out := m.run("partition"); code != 2 || !strings.Contains(out, "known stages: fetch-offline, fetch") {
			t.Errorf("exit = %d, want 2 listing the stages", code)
		}
	})
	t.Run("corrupt state file is a setup failure", func(t *testing.T) {
		m := newMachine(t, bin, `{"ignition":{"version":"3.4.0"}}`)
		m.write("run/ignition/state", "{")
		if code, _ := m.run("fetch-offline"); code != 3 {
			t.Errorf("exit = %d, want 3", code)
		}
	})
}
