// Command fleet boots a simulated fleet against one config server: many
// machines, each with its own resource.Fetcher (flint's real fetcher, its
// retries and backoff), fetch the same config at the same instant, spread
// over several processes as real machines are. It reports when the last
// one had its config and, from the server's access log, the request
// rate: its peak per 100 ms against its mean, which synchronized retry
// waves drive up. tests/bench/fleet/run.sh runs it against nginx with
// limit_req, without and with jitter (docs: tests/bench/fleet/README.md).
//
// usage: fleet -url URL -access-log FILE [-machines 300] [-procs 10]
//
//	[-jitter=true] [-timeout 120s]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// result is one process's machines: when each got its config (ns after
// the start), and how many did not.
type result struct {
	Done   []int64 `json:"done"`
	Failed int     `json:"failed"`
	Errors []string
}

func main() {
	url := flag.String("url", "", "the config's URL")
	machines := flag.Int("machines", 300, "machines in the fleet")
	procs := flag.Int("procs", 10, "processes the machines are spread over")
	jitter := flag.Bool("jitter", true, "retry with jitter (false: Ignition's doubling)")
	timeout := flag.Duration("timeout", 120*time.Second, "each machine's httpTotal, and the bound on the run")
	accessLog := flag.String("access-log", "", "the server's access log ($msec first on each line)")
	child := flag.Int("child", 0, "internal: run this many machines, starting at -start")
	start := flag.Int64("start", 0, "internal: the start, Unix ns")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "fleet: -url is required")
		os.Exit(2)
	}
	if *child > 0 {
		json.NewEncoder(os.Stdout).Encode(runMachines(*url, *child, *jitter, *timeout, time.Unix(0, *start)))
		return
	}
	if err := parent(*url, *machines, *procs, *jitter, *timeout, *accessLog); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// runMachines runs n machines in this process, each fetching url once
// with its own fetcher from start on.
func runMachines(url string, n int, jitter bool, timeout time.Duration, start time.Time) result {
	var mu sync.Mutex
	var r result
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			f := resource.New(resource.Options{NoJitter: !jitter, Version: "fleet"})
			f.SetTotalTimeout(timeout)
			time.Sleep(time.Until(start))
			_, err := f.FetchConfig(context.Background(), config.Resource{Source: &url})
			d := time.Since(start).Nanoseconds()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.Failed++
				if len(r.Errors) < 3 {
					r.Errors = append(r.Errors, err.Error())
				}
				return
			}
			r.Done = append(r.Done, d)
		})
	}
	wg.Wait()
	return r
}

func parent(url string, machines, procs int, jitter bool, timeout time.Duration, accessLog string) error {
	if procs < 1 || machines < procs {
		return fmt.Errorf("want 1 <= -procs <= -machines")
	}
	var offset int64
	if accessLog != "" {
		if st, err := os.Stat(accessLog); err == nil {
			offset = st.Size()
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Every process is started before the common start, as a fleet
	// powered on at once.
	start := time.Now().Add(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	type child struct {
		cmd *exec.Cmd
		out *strings.Builder
	}
	var children []child
	for i := range procs {
		n := machines / procs
		if i < machines%procs {
			n++
		}
		out := &strings.Builder{}
		cmd := exec.CommandContext(ctx, self, "-url", url, "-child", strconv.Itoa(n), "-start", strconv.FormatInt(start.UnixNano(), 10),
			"-jitter="+strconv.FormatBool(jitter), "-timeout", timeout.String())
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting process %d: %w", i, err)
		}
		children = append(children, child{cmd, out})
	}
	var done []int64
	failed := 0
	for i, c := range children {
		if err := c.cmd.Wait(); err != nil {
			return fmt.Errorf("process %d: %w", i, err)
		}
		var r result
		if err := json.Unmarshal([]byte(c.out.String()), &r); err != nil {
			return fmt.Errorf("process %d: %w", i, err)
		}
		done = append(done, r.Done...)
		failed += r.Failed
		for _, e := range r.Errors {
			fmt.Fprintln(os.Stderr, "fleet: a machine failed:", e)
		}
	}
	slices.Sort(done)
	mode := "jitter"
	if !jitter {
		mode = "no jitter"
	}
	fmt.Printf("mode: %s\nmachines: %d in %d processes, %d got their config, %d failed\n", mode, machines, procs, len(done), failed)
	if len(done) > 0 {
		fmt.Printf("last machine had its config after: %.2f s (median %.2f s)\n", float64(done[len(done)-1])/1e9, float64(done[len(done)/2])/1e9)
	}
	if accessLog != "" {
		if err := rates(accessLog, offset); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d machines did not get their config", failed)
	}
	return nil
}

// rates reads the access log from offset ($msec $status … per line) and
// prints the request rate per 100 ms bucket: peak, mean over the span
// from the first request to the last, and how many were turned away.
func rates(path string, offset int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	buckets := map[int64]int{}
	total, rejected := 0, 0
	first, last := int64(math.MaxInt64), int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		sec, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		b := int64(sec * 10)
		buckets[b]++
		first, last = min(first, b), max(last, b)
		total++
		if fields[1] != "200" {
			rejected++
		}
	}
	if total == 0 {
		return fmt.Errorf("no requests in %s", path)
	}
	// The first second is the fleet powering on, the same with every
	// schedule; the retries come after it.
	peak, retryPeak := 0, 0
	for b, n := range buckets {
		peak = max(peak, n)
		if b >= first+10 {
			retryPeak = max(retryPeak, n)
		}
	}
	span := float64(last-first+1) / 10
	mean := float64(total) / span
	fmt.Printf("requests: %d (%d turned away with 503) over %.1f s\n", total, rejected, span)
	fmt.Printf("request rate: peak %d per 100 ms (%.0f/s), mean %.1f/s, peak/mean %.1f\n", peak, float64(peak)*10, mean, float64(peak)*10/mean)
	fmt.Printf("after the first second: peak %d per 100 ms (%.0f/s), peak/mean %.1f\n", retryPeak, float64(retryPeak)*10, float64(retryPeak)*10/mean)
	return nil
}
