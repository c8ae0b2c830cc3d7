package oplog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
)

func TestOpAndTextHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewTextHandler(&buf, nil)).With(StageKey, "fetch")
	start := time.Now()
	Begin(log, "provider", "fetching the config from qemu").Finish()
	boom := errors.New("fw_cfg: no such key")
	if err := Begin(log, "provider", "fetching the config from qemu").Fail(boom); !errors.Is(err, boom) {
		t.Fatalf("Op.Fail(%v) = %v, want it returned unchanged", boom, err)
	}
	log.WithGroup("g").Debug("hidden at info level")
	log.WithGroup("g").Warn("grouped", "k", "a b")
	elapsed := time.Since(start)

	checkLines(t, &buf, elapsed, []string{
		`INFO     fetch: provider: \[started\] fetching the config from qemu$`,
		`INFO     fetch: provider: \[finished\] fetching the config from qemu duration=DURATION$`,
		`INFO     fetch: provider: \[started\] fetching the config from qemu$`,
		`ERROR    fetch: provider: \[failed\] fetching the config from qemu duration=DURATION error="fw_cfg: no such key"$`,
		`WARNING  fetch: grouped g.k="a b"$`,
	})
}

// checkLines matches the text handler's lines in buf against want, each
// after the timestamp. DURATION in a pattern stands for an operation's
// duration: it must read as a Go duration ("0s", "3ms", "1.204s"), whole
// milliseconds, and no longer than elapsed, the time the test spent
// logging (so a loaded machine changes the figure, never the verdict).
func checkLines(t *testing.T, buf *bytes.Buffer, elapsed time.Duration, want []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), buf)
	}
	for i, re := range want {
		re = strings.ReplaceAll(re, "DURATION", `(\S+)`)
		m := regexp.MustCompile(`^\d{4}-\d\d-\d\dT[\d:.]+Z ` + re).FindStringSubmatch(lines[i])
		if m == nil {
			t.Errorf("line %d = %q, want it to match %q", i, lines[i], re)
			continue
		}
		for _, s := range m[1:] {
			d, err := time.ParseDuration(s)
			switch {
			case err != nil:
				t.Errorf("line %d: duration %q: %v", i, s, err)
			case d < 0 || d%time.Millisecond != 0:
				t.Errorf("line %d: duration %v, want whole milliseconds, not negative", i, d)
			case d > elapsed.Round(time.Millisecond):
				t.Errorf("line %d: duration %v, longer than the %v the test took", i, d, elapsed)
			}
		}
	}
}

// TestQuick: an operation started with Quick logs only its outcome, the
// [finished] line with its attributes or the [failed] line with the error.
func TestQuick(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewTextHandler(&buf, nil)).With(StageKey, "files")
	start := time.Now()
	Quick(log, "files", "creating directory /etc/d").Finish("mode", "0755", "uid", 0, "gid", 0)
	boom := errors.New("read-only file system")
	if err := Quick(log, "files", "creating directory /etc/e").Fail(boom); !errors.Is(err, boom) {
		t.Fatalf("Op.Fail(%v) = %v, want it returned unchanged", boom, err)
	}
	// Two lines, no [started] lines.
	checkLines(t, &buf, time.Since(start), []string{
		`INFO     files: files: \[finished\] creating directory /etc/d duration=DURATION mode=0755 uid=0 gid=0$`,
		`ERROR    files: files: \[failed\] creating directory /etc/e duration=DURATION error="read-only file system"$`,
	})
}

type sent struct {
	msg    string
	pri    journal.Priority
	fields map[string]string
}

func TestJournalHandler(t *testing.T) {
	var got []sent
	send := func(msg string, pri journal.Priority, fields map[string]string) error {
		got = append(got, sent{msg, pri, fields})
		return nil
	}
	log := slog.New(NewJournalHandler(send)).With(StageKey, "fetch-offline", OpKey, "cache")
	log.Info(`fetched user config from "cmdline"`, "MESSAGE_ID", "57124006b5c94805b77ce473e92a8aeb", "IGNITION_CONFIG_TYPE", "user", "path", "/run/ignition.json")
	log.Log(context.Background(), LevelCritical, "stage failed", "error", "boom")
	log.Debug("debug goes to the journal too")

	if len(got) != 3 {
		t.Fatalf("sent %d entries, want 3", len(got))
	}
	e := got[0]
	if e.msg != `fetch-offline: cache: fetched user config from "cmdline" path=/run/ignition.json` || e.pri != journal.PriInfo {
		t.Errorf("entry = %q priority %d", e.msg, e.pri)
	}
	for k, v := range map[string]string{
		"SYSLOG_IDENTIFIER":    "flint",
		"MESSAGE_ID":           "57124006b5c94805b77ce473e92a8aeb",
		"IGNITION_CONFIG_TYPE": "user",
		"FLINT_STAGE":          "fetch-offline",
		"FLINT_OP":             "cache",
		"FLINT_PATH":           "/run/ignition.json",
	} {
		if e.fields[k] != v {
			t.Errorf("field %s = %q, want %q", k, e.fields[k], v)
		}
	}
	if got[1].pri != journal.PriCrit || got[1].msg != "fetch-offline: cache: stage failed error=boom" {
		t.Errorf("critical entry = %q priority %d", got[1].msg, got[1].pri)
	}
	if got[2].pri != journal.PriDebug {
		t.Errorf("debug entry priority = %d, want %d", got[2].pri, journal.PriDebug)
	}
}

// TestDelayedWriter: lines are held until Flush, until the delay has
// passed (so a hanging operation's [started] line shows), or until enough
// have gathered; nothing is lost or reordered.
func TestDelayedWriter(t *testing.T) {
	var mu sync.Mutex
	var out bytes.Buffer
	sink := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	})
	read := func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	d := NewDelayedWriter(sink, time.Hour)
	d.Write([]byte("one\n"))
	d.Write([]byte("two\n"))
	if got := read(); got != "" {
		t.Fatalf("written before the delay: %q", got)
	}
	if err := d.Flush(); err != nil || read() != "one\ntwo\n" {
		t.Fatalf("after Flush: %q, %v", read(), err)
	}
	// Enough at once is written at once.
	big := strings.Repeat("x", maxDelayed) + "\n"
	d.Write([]byte(big))
	if got := read(); got != "one\ntwo\n"+big {
		t.Fatalf("a full buffer was held: %d bytes out", len(got))
	}
	// The delay passes: written without a Flush.
	d = NewDelayedWriter(sink, 10*time.Millisecond)
	log := slog.New(NewTextHandler(d, nil))
	Begin(log, "fetch", "fetching https://example.invalid/hangs")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(read(), "[started] fetching https://example.invalid/hangs") {
		if time.Now().After(deadline) {
			t.Fatalf("the [started] line was not written within 5 s of a 10 ms delay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// An error of the underlying writer is returned, then kept.
	boom := errors.New("broken pipe")
	d = NewDelayedWriter(writerFunc(func([]byte) (int, error) { return 0, boom }), time.Hour)
	d.Write([]byte("lost\n"))
	if err := d.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush = %v, want %v", err, boom)
	}
	if _, err := d.Write([]byte("more\n")); !errors.Is(err, boom) {
		t.Fatalf("Write after a failed flush = %v, want %v", err, boom)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
