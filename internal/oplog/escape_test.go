package oplog

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/journal"
)

// forged is a path from a config made to forge a log line: a newline, then
// what a [finished] line looks like, then a NUL and a terminal escape.
const forged = "/etc/x\n2026-01-02T03:04:05.000Z INFO     files: files: [finished] writing file /etc/shadow\x00\x1b[2J\u009b"

// escapedForged is forged as the lines must show it.
const escapedForged = `/etc/x\n2026-01-02T03:04:05.000Z INFO     files: files: [finished] writing file /etc/shadow\x00\x1b[2J\u009b`

// TestTextHandlerEscapes: every value from a config or a server is
// escaped in the text lines, in the message as in the attributes, so a
// forged path stays one line, with no NUL or control byte.
func TestTextHandlerEscapes(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewTextHandler(&buf, nil)).With(StageKey, "files")
	Quick(log, "files", "writing file "+forged).Finish("user", "core\nroot")
	Begin(log, "files", "fetching "+forged).Fail(errors.New("file " + forged + ": boom"))
	log.Warn("odd value", "k", "a\u0085b")

	out := buf.String()
	if strings.ContainsAny(out, "\x00\x1b\u009b\u0085") {
		t.Errorf("a control character reached the output: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("logged %d lines, want 4:\n%s", len(lines), out)
	}
	for i, want := range []string{
		`files: files: [finished] writing file ` + escapedForged + ` duration=`,
		`files: files: [started] fetching ` + escapedForged,
		`files: files: [failed] fetching ` + escapedForged + ` duration=`,
		`files: odd value k="a\u0085b"`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], `user="core\nroot"`) || !strings.Contains(lines[2], `error="file /etc/x\n2026`) {
		t.Errorf("attributes not quoted: %q", lines)
	}
}

// TestJournalHandlerEscapes: the journal's MESSAGE is one line too (the
// console shows it through journalctl); the FLINT_ fields keep the exact
// value for tools that read them.
func TestJournalHandlerEscapes(t *testing.T) {
	var got []sent
	send := func(msg string, pri journal.Priority, fields map[string]string) error {
		got = append(got, sent{msg, pri, fields})
		return nil
	}
	log := slog.New(NewJournalHandler(send)).With(StageKey, "files")
	Quick(log, "files", "writing file "+forged).Finish("path", forged)
	if len(got) != 1 {
		t.Fatalf("sent %d entries, want 1", len(got))
	}
	if want := "files: files: [finished] writing file " + escapedForged; !strings.HasPrefix(got[0].msg, want) {
		t.Errorf("message = %q, want it to start with %q", got[0].msg, want)
	}
	if strings.ContainsAny(got[0].msg, "\n\x00\x1b") {
		t.Errorf("message holds a control character: %q", got[0].msg)
	}
	if got[0].fields["FLINT_PATH"] != forged {
		t.Errorf("FLINT_PATH = %q, want the exact value", got[0].fields["FLINT_PATH"])
	}
}
