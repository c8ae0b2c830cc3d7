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
	Begin(log, "provider", "fetching the config from qemu").Finish()
	boom := errors.New("fw_cfg: no such key")
	if err := Begin(log, "provider", "fetching the config from qemu").Fail(boom); !errors.Is(err, boom) {
		t.Fatalf("Op.Fail(%v) = %v, want it returned unchanged", boom, err)
	}
	log.WithGroup("g").Debug("hidden at info level")
	log.WithGroup("g").Warn("grouped", "k", "a b")

	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		`INFO     fetch: provider: \[started\] fetching the config from qemu$`,
		`INFO     fetch: provider: \[finished\] fetching the config from qemu duration=\d+s$`,
		`INFO     fetch: provider: \[started\] fetching the config from qemu$`,
		`ERROR    fetch: provider: \[failed\] fetching the config from qemu duration=\d+s error="fw_cfg: no such key"$`,
		`WARNING  fetch: grouped g.k="a b"$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), &buf)
	}
	for i, re := range want {
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT[\d:.]+Z ` + re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want it to match %q", i, lines[i], re)
		}
	}
}

// TestQuick: an operation started with Quick logs only its outcome, the
// [finished] line with its attributes or the [failed] line with the error.
func TestQuick(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewTextHandler(&buf, nil)).With(StageKey, "files")
	Quick(log, "files", "creating directory /etc/d").Finish("mode", "0755", "uid", 0, "gid", 0)
	boom := errors.New("read-only file system")
	if err := Quick(log, "files", "creating directory /etc/e").Fail(boom); !errors.Is(err, boom) {
		t.Fatalf("Op.Fail(%v) = %v, want it returned unchanged", boom, err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		`INFO     files: files: \[finished\] creating directory /etc/d duration=\d+s mode=0755 uid=0 gid=0$`,
		`ERROR    files: files: \[failed\] creating directory /etc/e duration=\d+s error="read-only file system"$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d (no [started] lines):\n%s", len(lines), len(want), &buf)
	}
	for i, re := range want {
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT[\d:.]+Z ` + re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want it to match %q", i, lines[i], re)
		}
	}
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
