package bench

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages/files"
)

// Ignition's figure and flint's target for the fetch and files
// stages on the large config without its users (5,000 files, 50
// directories, 100 links, 200 units) into an empty root: a tenth of
// Ignition's time (issue 19; it was 0.35 s before).
const (
	refFetchFilesSeconds    = 1.72
	targetFetchFilesSeconds = 0.172
)

// median of ds, in seconds.
func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2].Seconds()
	}
	return (s[n/2-1] + s[n/2]).Seconds() / 2
}

// buildFlint builds the shipped binary (static, HTTP/1.1 only) into dir.
func buildFlint(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "flint")
	cmd := exec.Command("go", "build", "-tags", "nethttpomithttp2", "-trimpath", "-o", bin, "../../cmd/flint")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("cannot build flint: %v\n%s", err, out)
	}
	return bin
}

// withoutUsers drops the passwd section: the figure measures files, not
// useradd.
func withoutUsers(b *testing.B, raw []byte) []byte {
	b.Helper()
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cfg); err != nil {
		b.Fatal(err)
	}
	delete(cfg, "passwd")
	out, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkFetchFilesLarge runs `flint run -stage fetch` then `-stage
// files` (two processes, as the distro's units do) on the large config
// into an empty root, and reports the median wall time of both together
// (median-s) against Ignition's (ref-s), and their ratio. Run it with
// -benchtime=15x for a stable median.
func BenchmarkFetchFilesLarge(b *testing.B) {
	dir := b.TempDir()
	bin := buildFlint(b, dir)
	cfg := filepath.Join(dir, "config.ign")
	if err := os.WriteFile(cfg, withoutUsers(b, largeConfig(b)), 0o600); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cmdline"), []byte("ignition.platform.id=file\n"), 0o644)
	env := append(os.Environ(),
		"IGNITION_CONFIG_FILE="+cfg,
		"IGNITION_KERNEL_CMDLINE_PATH="+filepath.Join(dir, "cmdline"),
		"IGNITION_SYSTEM_CONFIG_DIR="+filepath.Join(dir, "none"),
		"IGNITION_SYSTEM_LOCAL_CONFIG_DIR="+filepath.Join(dir, "none"),
		"IGNITION_SYSTEM_RUNTIME_CONFIG_DIR="+filepath.Join(dir, "none"))
	base := benchDir(b)
	var times []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		run := filepath.Join(base, fmt.Sprint("run", i))
		root := filepath.Join(run, "sysroot")
		if err := os.MkdirAll(root, 0o755); err != nil {
			b.Fatal(err)
		}
		i++
		b.StartTimer()
		start := time.Now()
		for _, stage := range []string{"fetch", "files"} {
			cmd := exec.Command(bin, "run", "-platform", "file", "-stage", stage, "-root", root,
				"-config-cache", filepath.Join(run, "ignition.json"), "-state-file", filepath.Join(run, "state"),
				"-neednet", filepath.Join(run, "neednet"), "-log-to-stdout")
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("stage %s: %v\n%s", stage, err, tail(out))
			}
		}
		times = append(times, time.Since(start))
		b.StopTimer()
		os.RemoveAll(run)
		b.StartTimer()
	}
	b.ReportMetric(median(times), "median-s")
	b.ReportMetric(median(times)/refFetchFilesSeconds, "ratio")
	b.ReportMetric(floor(b, base), "floor-s")
	b.ReportMetric(refFetchFilesSeconds, "ref-s")
	b.ReportMetric(targetFetchFilesSeconds, "target-s")
}

// floor is the median time a plain loop takes to write 5,000 small files
// into 50 directories (write a temporary file, rename it) in dir: what the
// filesystem under the benchmark costs whatever writes to it, so that
// median-s can be read on a machine whose disk is slower than the
// reference's.
func floor(b *testing.B, dir string) float64 {
	var times []time.Duration
	for r := range 5 {
		d := filepath.Join(dir, fmt.Sprint("floor", r))
		start := time.Now()
		for i := range 5000 {
			p := filepath.Join(d, fmt.Sprint("d", i%50), fmt.Sprint("f", i))
			if i < 50 {
				os.MkdirAll(filepath.Dir(p), 0o755)
			}
			if err := os.WriteFile(p+".tmp", []byte("twenty bytes of text"), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(p+".tmp", p); err != nil {
				b.Fatal(err)
			}
		}
		times = append(times, time.Since(start))
		os.RemoveAll(d)
	}
	return median(times)
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// BenchmarkRemoteFiles writes 100 files of 4 KiB, each verified by its
// SHA-512, served by a local HTTP server that delays each response by
// 50 ms, once fetching one at a time (Parallel 1) and once with the
// stage's default bounds, and reports both medians and the speedup.
func BenchmarkRemoteFiles(b *testing.B) {
	const n, size, delay = 100, 4096, 50 * time.Millisecond
	body := func(path string) []byte {
		return []byte(strings.Repeat(path+"\n", size)[:size])
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Write(body(r.URL.Path))
	}))
	defer srv.Close()
	var entries []string
	for i := range n {
		sum := sha512.Sum512(body(fmt.Sprintf("/f%d", i)))
		entries = append(entries, fmt.Sprintf(`{"path":"/srv/d%d/f%d","contents":{"source":"%s/f%d","verification":{"hash":"sha512-%s"}}}`,
			i%10, i, srv.URL, i, hex.EncodeToString(sum[:])))
	}
	cfg, rep, err := config.Parse([]byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[` + strings.Join(entries, ",") + `]}}`))
	if err != nil {
		b.Fatalf("%v\n%s", err, rep)
	}
	run := func(parallel int) time.Duration {
		root := b.TempDir()
		start := time.Now()
		err := files.Run(context.Background(), files.Deps{
			Config: cfg, Root: root, Parallel: parallel,
			Fetcher: resource.New(resource.Options{}),
			Runner:  noCommands{},
			BootID:  func() (string, error) { return "bench", nil },
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var serial, parallel []time.Duration
	for b.Loop() {
		serial = append(serial, run(1))
		parallel = append(parallel, run(0))
	}
	b.ReportMetric(median(serial), "serial-median-s")
	b.ReportMetric(median(parallel), "parallel-median-s")
	b.ReportMetric(median(serial)/median(parallel), "speedup")
}

// noCommands is the runner of a root that needs none (no users, no LUKS,
// no SELinux, no result file before).
type noCommands struct{}

func (noCommands) Run(_ context.Context, name string, _ ...string) ([]byte, error) {
	return nil, fmt.Errorf("%s: no commands in this benchmark", name)
}

// BenchmarkFilesStageLarge runs the files stage in-process on the large
// config without users into an empty root: the stage's own cost, without
// process start-up, cache reading or the fetch stage. Its log goes
// through the text handler of -log-to-stdout, into io.Discard.
func BenchmarkFilesStageLarge(b *testing.B) {
	log := slog.New(oplog.NewTextHandler(io.Discard, nil))
	cfg, rep, err := config.Parse(withoutUsers(b, largeConfig(b)))
	if err != nil {
		b.Fatalf("%v\n%s", err, rep)
	}
	base := benchDir(b)
	i := 0
	for b.Loop() {
		b.StopTimer()
		root := filepath.Join(base, fmt.Sprint("root", i))
		i++
		os.MkdirAll(root, 0o755)
		b.StartTimer()
		err := files.Run(context.Background(), files.Deps{
			Config: cfg, Root: root, Logger: log,
			Fetcher: resource.New(resource.Options{}),
			Runner:  noCommands{},
			BootID:  func() (string, error) { return "bench", nil },
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(root)
		b.StartTimer()
	}
}

// benchDir is where the benchmarks' roots go: $FLINT_BENCH_DIR, else a
// temp dir.
func benchDir(b *testing.B) string {
	if d := os.Getenv("FLINT_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "flint-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}
