// Package oplog records what flint does so that someone reading a failed
// boot's journal sees what was being done, to what, and why it failed:
// every side effect is an operation logged as [started], then [finished] or
// [failed] with its duration (Begin). An operation that cannot keep anyone
// waiting logs only its outcome (Quick), so that thousands of small files
// do not cost twice as many lines. It provides the two places the lines go:
// the systemd journal, with the structured fields distro tooling hooks
// (NewJournalHandler), and a plain text stream for -log-to-stdout and for
// machines without a journal (NewTextHandler).
//
// Loggers carry the attributes "stage" and "op"; handlers put them at the
// front of each line.
//
// Family: plumbing (internal/README.md).
package oplog

import (
	"context"
	"log/slog"
	"time"
)

// Attribute keys every flint logger uses.
const (
	StageKey = "stage"
	OpKey    = "op"
)

// LevelCritical ranks a failure that stops the boot above slog's errors
// (the journal's CRIT).
const LevelCritical = slog.LevelError + 4

// Op is an operation in progress: Begin logs its [started] line (Quick
// none), and Finish or Fail its last one.
type Op struct {
	log   *slog.Logger // without the op attribute: each line adds it
	op    string
	what  string
	start time.Time
}

// Begin logs "[started] what" on log with op as its operation.
func Begin(log *slog.Logger, op, what string) *Op {
	o := &Op{log: log, op: op, what: what, start: time.Now()}
	o.line(slog.LevelInfo, "[started] ")
	return o
}

// Quick starts an operation that only does local work that cannot take
// long (creating a directory, writing contents already in the config): it
// logs no [started] line, only the [finished] or [failed] one, which says
// what was done. Anything that can wait (a fetch, a command) uses Begin, so
// that a hang shows what it hangs on.
func Quick(log *slog.Logger, op, what string) *Op {
	return &Op{log: log, op: op, what: what, start: time.Now()}
}

// Log is the operation's logger, for lines in between.
func (o *Op) Log() *slog.Logger { return o.log.With(OpKey, o.op) }

func (o *Op) duration() time.Duration { return time.Since(o.start).Round(time.Millisecond) }

// Finish logs "[finished] what" with the duration and args (key-value
// pairs, as for slog).
func (o *Op) Finish(args ...any) {
	o.line(slog.LevelInfo, "[finished] ", append([]any{"duration", o.duration()}, args...)...)
}

// Fail logs "[failed] what" with the duration and err, and returns err.
func (o *Op) Fail(err error) error {
	o.line(slog.LevelError, "[failed] ", "duration", o.duration(), "error", err)
	return err
}

// line logs tag+what with the op attribute, as o.Log() would, but
// straight to the handler: no logger per operation and no caller lookup
// (the handlers print no source), which thousands of files made count.
func (o *Op) line(level slog.Level, tag string, args ...any) {
	ctx := context.Background()
	h := o.log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, tag+o.what, 0)
	r.AddAttrs(slog.String(OpKey, o.op))
	r.Add(args...)
	h.Handle(ctx, r)
}
