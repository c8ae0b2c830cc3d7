//go:build linux

package blackbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// withAppends adds to a config n appends to files the image has
// (/etc/appended-<i>, "image\n"): the entries a rerun cannot tell applied
// by the node alone.
func withAppends(t *testing.T, raw string, n int) string {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	storage, _ := cfg["storage"].(map[string]any)
	files, _ := storage["files"].([]any)
	for i := range n {
		files = append(files, map[string]any{
			"path":   fmt.Sprintf("/etc/appended-%d", i),
			"append": []any{map[string]any{"source": "data:,appended%0A"}},
		})
	}
	storage["files"] = files
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestFilesStagePowerLossAndRerun simulates a power loss during the files
// stage of the 5,000-file config (with appends): the stage is killed with
// SIGKILL at a random point, then the next boot's view is made: the
// progress journal in /run (state.files) is gone and the state file is
// what the fetch stages of that boot leave, knowing nothing of the files
// stage. The rerun must succeed and leave exactly what an uninterrupted
// run leaves: no entry fails as already there, no fragment is appended
// twice, no journal of flint's stays on the root. (A real power loss may
// also lose file contents the kernel had not written back; the unit
// tests cover the empty files that leaves.) FLINT_KILL_SEED replays the
// kill points.
func TestFilesStagePowerLossAndRerun(t *testing.T) {
	requireRoot(t)
	if testing.Short() {
		t.Skip("runs the files stage of the 5,000-file config 11 times")
	}
	const appends = 20
	bin := buildFlint(t)
	m := filesMachine(t, bin, withAppends(t, largeConfig(t), appends))
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
	// freshRun is /run as the fetch stages of a boot leave it.
	freshRun := func(run string) {
		os.RemoveAll(run)
		if err := os.MkdirAll(filepath.Join(run, "ignition"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(run, "ignition.json"), cache, 0o600)
		os.WriteFile(filepath.Join(run, "ignition", "state"), state, 0o600)
	}
	boot := func(name string) (root, run string) {
		root = filepath.Join(m.dir, name, "sysroot")
		run = filepath.Join(m.dir, name, "run")
		for i := range appends {
			p := filepath.Join(root, "etc", fmt.Sprint("appended-", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("image\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		freshRun(run)
		return root, run
	}
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
	if got := want["etc/appended-0"]; got != "-rw-r--r-- 0:0 image\nappended\n" {
		t.Fatalf("uninterrupted run: etc/appended-0 = %q", got)
	}
	os.RemoveAll(filepath.Dir(root))

	rnd := killPoints(t)
	kills, midway := 0, 0
	for try := 1; kills < 5; try++ {
		if try > 15 {
			t.Fatalf("only %d of 15 tries killed the stage", kills)
		}
		root, run := boot(fmt.Sprint("try", try))
		cmd := files(root, run)
		at := time.Duration(rnd.Int64N(int64(whole)))
		if killed, ran := killAfter(t, cmd, at); !killed {
			whole = min(whole, ran)
			os.RemoveAll(filepath.Dir(root))
			continue
		}
		kills++
		written := len(rootTree(t, root))
		if written > appends+2 && written < len(want) {
			midway++
		}
		// The power loss: the next boot has a new /run.
		freshRun(run)
		out, err := files(root, run).CombinedOutput()
		if err != nil {
			t.Errorf("try %d, power lost after %v (%d nodes there): the run after it failed: %v\n%s",
				try, at.Round(time.Millisecond), written, err, tail(out))
			continue
		}
		diffs := compareTrees(t, fmt.Sprintf("try %d, power lost after %v", try, at.Round(time.Millisecond)), rootTree(t, root), want)
		t.Logf("try %d: power lost after %v (%d of %d nodes there): the run after it converged: %v",
			try, at.Round(time.Millisecond), written, len(want), diffs == 0)
		os.RemoveAll(filepath.Dir(root))
	}
	if midway == 0 {
		t.Errorf("no power loss landed while the stage was writing the nodes: the test proved nothing")
	}
}
