package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/fetch"
)

// fileEvents watches dir (inotify(7)) for the events in mask and returns
// a function that counts those seen so far in count, by file name. The
// kernel merges an event with the one before it when they are the same:
// mask must hold one more event between two that are counted (a close
// between two opens).
func fileEvents(t *testing.T, dir string, mask, count uint32) func() map[string]int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		t.Fatalf("watching %s: %v", dir, err)
	}
	seen := map[string]int{}
	return func() map[string]int {
		buf := make([]byte, 64*1024)
		for {
			n, err := syscall.Read(fd, buf)
			if n <= 0 || err != nil {
				return seen
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
				if ev.Mask&count != 0 {
					seen[string(bytes.TrimRight(name, "\x00"))]++
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

// The state file is written once per stage: the stage's record goes in
// with the state it leaves, not in a second write (each an fsync of the
// file and of its directory).
func TestStateWrittenOnce(t *testing.T) {
	h := newHarness(t, "", serve(`{"ignition":{"version":"3.4.0"}}`))
	list := func(Options) []row {
		return []row{
			{name: "mount", stage: stageFunc(func(_ context.Context, e *stages.Env) error {
				e.State.NotatedDirectories = []string{"/srv"}
				return nil
			})},
			{name: "files", stage: stageFunc(func(context.Context, *stages.Env) error { return errors.New("no") })},
		}
	}
	writes := fileEvents(t, filepath.Dir(h.opts.StateFile), syscall.IN_MOVED_TO|syscall.IN_CLOSE_WRITE, syscall.IN_MOVED_TO)
	for _, tc := range []struct {
		stage   string
		outcome string
	}{{"mount", "success"}, {"files", "failure"}} {
		before := writes()["state"]
		o := h.opts
		o.Stage = tc.stage
		err := run(context.Background(), o, list)
		if (err != nil) != (tc.outcome == "failure") {
			t.Fatalf("run(%s) = %v", tc.stage, err)
		}
		if got := writes()["state"] - before; got != 1 {
			t.Errorf("run(%s): state file written %d times, want 1", tc.stage, got)
		}
	}
	s := h.state()
	if len(s.Stages) != 2 || s.Stages[0].Name != "mount" || s.Stages[0].Outcome != "success" || s.Stages[1].Outcome != "failure" {
		t.Errorf("state.Stages = %+v, want mount's success, then files' failure", s.Stages)
	}
	if len(s.NotatedDirectories) != 1 {
		t.Errorf("state.NotatedDirectories = %v, want [/srv]", s.NotatedDirectories)
	}
}

// A stage that writes the stamp on its own filesystem reads and parses
// the config cache once: the stamp's check and the stage share it.
func TestConfigCacheReadOnce(t *testing.T) {
	h := newHarness(t, "mount", nil)
	cfg := `{"ignition":{"version":"` + config.Newest.String() + `"},"storage":{"files":[{"path":"/etc/motd"}]}}`
	h.write("run/ignition.json", cfg)
	m := bootFS(t, "")
	h.opts.StampFile, h.opts.StampDevice, h.opts.StampMounter = m.stampFile, m.device, m.mounter
	h.opts.BootID = func() (string, error) { return "boot-1", nil }
	var got config.Config
	list := func(o Options) []row {
		return []row{{name: "mount", stage: fetch.FromCache(sources(o), captureStage{&got})}}
	}
	opens := fileEvents(t, filepath.Dir(h.opts.ConfigCache), syscall.IN_OPEN|syscall.IN_CLOSE_NOWRITE, syscall.IN_OPEN)
	if err := run(context.Background(), h.opts, list); err != nil {
		t.Fatalf("run(mount) = %v", err)
	}
	if n := opens()["ignition.json"]; n != 1 {
		t.Errorf("config cache opened %d times, want 1", n)
	}
	if len(got.Storage.Files) != 1 || got.Storage.Files[0].Path != "/etc/motd" {
		t.Errorf("the stage's config = %+v, want the cache's", got.Storage)
	}
	if strings.Join(m.mounter.calls, " ") != "rw" {
		t.Errorf("mounts = %v, want one read-write mount for the stamp", m.mounter.calls)
	}
}

// failingMounter fails its mounts after the first ok.
type failingMounter struct {
	StampMounter
	ok int
}

func (f *failingMounter) Mount(ctx context.Context, device, dir string, rw bool) error {
	if f.ok == 0 {
		return errors.New("mount: device busy")
	}
	f.ok--
	return f.StampMounter.Mount(ctx, device, dir, rw)
}

// A files stage whose state was saved but whose stamp could not be
// removed failed: its one record says so.
func TestStageRecordAfterTheStampsRemovalFailed(t *testing.T) {
	h := newHarness(t, "files", nil)
	m := bootFS(t, "")
	h.opts.StampFile, h.opts.StampDevice = m.stampFile, m.device
	h.opts.StampMounter = &failingMounter{StampMounter: m.mounter, ok: 1}
	h.opts.BootID = func() (string, error) { return "boot-1", nil }
	list := func(Options) []row {
		return []row{{name: "files", stage: stageFunc(func(context.Context, *stages.Env) error { return nil })}}
	}
	err := run(context.Background(), h.opts, list)
	if err == nil || !strings.Contains(err.Error(), "device busy") {
		t.Fatalf("run(files) = %v, want the stamp's mount error", err)
	}
	s := h.state()
	if len(s.Stages) != 1 || s.Stages[0].Name != "files" || s.Stages[0].Outcome != "failure" || !strings.Contains(s.Stages[0].Error, "device busy") {
		t.Errorf("state.Stages = %+v, want one record of files' failure", s.Stages)
	}
	if !s.FirstbootStamped {
		t.Errorf("state.FirstbootStamped = false, want the state the stage saved")
	}
}
