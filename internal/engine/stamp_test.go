package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages"
)

// recorder is a stage that records its runs, and what the stamp said
// while it ran; it fails while fail is set.
type recorder struct {
	m    *machineBoots
	name string
}

func (r recorder) Run(ctx context.Context, e *stages.Env) error {
	raw, _ := os.ReadFile(r.m.stampFile)
	var s stamp
	json.Unmarshal(raw, &s)
	r.m.ran = append(r.m.ran, r.name+"@"+s.Stage)
	r.m.interrupted = e.State.InterruptedStage
	if r.m.fail == r.name {
		return errors.New("power lost")
	}
	return nil
}

// machineBoots is one machine booting again and again: its stamp file
// outlives the boots, the state under /run does not.
type machineBoots struct {
	dir, stampFile string
	boot           int
	cmdline        string
	fail           string
	ran            []string
	interrupted    string
	// device and mounter, when set, keep the stamp on a filesystem the
	// engine mounts (Options.StampDevice); cache is the config cache.
	device  string
	mounter *fakeStampFS
	cache   string
}

func (m *machineBoots) list(Options) []row {
	var rows []row
	for _, n := range []string{"fetch-offline", "fetch", "kargs", "disks", "mount", "files", "umount"} {
		rows = append(rows, row{name: n, stage: recorder{m, n}})
	}
	return rows
}

// bootOnce runs the stages in order in a new boot, up to the first that
// fails; it returns that error.
func (m *machineBoots) bootOnce(t *testing.T) error {
	t.Helper()
	m.boot++
	m.ran = nil
	runDir := filepath.Join(m.dir, "run", string(rune('a'+m.boot)))
	for _, n := range []string{"fetch-offline", "fetch", "kargs", "disks", "mount", "files", "umount"} {
		o := Options{
			Stage:     n,
			StateFile: filepath.Join(runDir, "state"),
			StampFile: m.stampFile,
			BootID:    func() (string, error) { return "boot-" + string(rune('0'+m.boot)), nil },
			ReadCmdline: func() (platform.Cmdline, error) {
				return platform.ParseCmdline(m.cmdline), nil
			},
			NewFetcher:  func(*slog.Logger, bool) (Fetcher, error) { return nil, nil },
			ConfigCache: m.cache,
		}
		if m.mounter != nil {
			o.StampDevice, o.StampMounter = m.device, m.mounter
		}
		if err := run(context.Background(), o, m.list); err != nil {
			return err
		}
	}
	return nil
}

func (m *machineBoots) stamp(t *testing.T) (stamp, bool) {
	t.Helper()
	raw, err := os.ReadFile(m.stampFile)
	if errors.Is(err, os.ErrNotExist) {
		return stamp{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var s stamp
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("stamp %s: %v", raw, err)
	}
	return s, true
}

func TestStampCoversTheWritingStages(t *testing.T) {
	m := &machineBoots{dir: t.TempDir()}
	m.stampFile = filepath.Join(m.dir, "boot", "flint.firstboot-in-progress")
	if err := m.bootOnce(t); err != nil {
		t.Fatalf("first boot = %v", err)
	}
	want := "fetch-offline@ fetch@ kargs@ disks@disks mount@mount files@files umount@"
	if got := strings.Join(m.ran, " "); got != want {
		t.Errorf("stages (with the stamp they ran under) = %s, want %s", got, want)
	}
	if s, ok := m.stamp(t); ok {
		t.Errorf("stamp after a first boot that finished = %+v, want none", s)
	}
}

func TestStampStopsTheNextBoot(t *testing.T) {
	for _, tc := range []struct {
		fail, cmdline string
		wantErr       bool
	}{
		{"files", "", true},
		{"disks", "quiet", true},
		{"mount", "flint.firstboot.retry=0", true},
		{"files", "flint.firstboot.retry=1", false},
		{"kargs", "", false}, // before any stage that writes: nothing to stop
	} {
		m := &machineBoots{dir: t.TempDir(), fail: tc.fail, cmdline: tc.cmdline}
		m.stampFile = filepath.Join(m.dir, "boot", "flint.firstboot-in-progress")
		if err := m.bootOnce(t); err == nil {
			t.Fatalf("boot with %s failing = nil, want its error", tc.fail)
		}
		s, stamped := m.stamp(t)
		if wantStamp := tc.fail != "kargs"; stamped != wantStamp || stamped && (s.Stage != tc.fail || s.BootID != "boot-1") {
			t.Errorf("%s failed: stamp %+v (there: %v), want stage %s of boot-1", tc.fail, s, stamped, tc.fail)
		}
		m.fail = ""
		err := m.bootOnce(t)
		if tc.wantErr {
			if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "stopped in stage "+tc.fail) ||
				!strings.HasPrefix(err.Error(), "stage fetch-offline:") || !strings.Contains(err.Error(), KargFirstbootRetry+"=1") {
				t.Errorf("boot after %s failed (%q) = %v, want ErrInterrupted naming %s in fetch-offline", tc.fail, tc.cmdline, err, tc.fail)
			}
			if len(m.ran) != 0 {
				t.Errorf("boot after %s failed: ran %v, want nothing", tc.fail, m.ran)
			}
			if s2, _ := m.stamp(t); s2 != s {
				t.Errorf("the refused boot changed the stamp: %+v, was %+v", s2, s)
			}
			continue
		}
		if err != nil {
			t.Errorf("boot after %s failed (%q) = %v, want it to go on", tc.fail, tc.cmdline, err)
		}
		if wantInt := map[bool]string{true: tc.fail}[tc.fail != "kargs"]; m.interrupted != wantInt {
			t.Errorf("state's interrupted stage = %q, want %q", m.interrupted, wantInt)
		}
		if s, ok := m.stamp(t); ok {
			t.Errorf("stamp after the retried boot finished = %+v, want none", s)
		}
	}
}

func TestStampWithoutStampFile(t *testing.T) {
	m := &machineBoots{dir: t.TempDir(), fail: "files"}
	if err := m.bootOnce(t); err == nil {
		t.Fatal("boot = nil, want the files stage's error")
	}
	m.fail = ""
	if err := m.bootOnce(t); err != nil {
		t.Errorf("boot without a stamp file = %v, want no check", err)
	}
}
