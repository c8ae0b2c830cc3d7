package oplog

import (
	"context"
	"log/slog"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"

	"github.com/flintboot/flint/internal/escape"
)

// Identifier is the SYSLOG_IDENTIFIER of flint's journal entries: read
// them with journalctl -t flint.
const Identifier = "flint"

// JournalSender sends one entry to the journal: go-systemd's journal.Send,
// or a fake in tests.
type JournalSender func(message string, priority journal.Priority, fields map[string]string) error

// JournalAvailable reports whether the journal's socket is there.
func JournalAvailable() bool { return journal.Enabled() }

// isFieldName reports whether k is a journal field name a caller passes
// through as is: MESSAGE_ID, IGNITION_CONFIG_TYPE and the like
// (systemd.journal-fields(7) allows A-Z, 0-9 and _, not starting with _).
func isFieldName(k string) bool {
	if k == "" || k[0] == '_' {
		return false
	}
	for _, r := range k {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// journalHandler sends records to the journal. Attributes named like
// journal fields (MESSAGE_ID, IGNITION_CONFIG_SRC) become those fields
// only; every other attribute is shown in the message and also stored as
// FLINT_<KEY>, so entries can be filtered with journalctl FLINT_STAGE=fetch.
type journalHandler struct {
	send JournalSender
	scope
}

// NewJournalHandler returns a handler that sends every record, debug
// included (journald filters by its own MaxLevel settings), with send
// (nil: journal.Send).
func NewJournalHandler(send JournalSender) slog.Handler {
	if send == nil {
		send = journal.Send
	}
	return &journalHandler{send: send}
}

func (h *journalHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *journalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.scope = h.withAttrs(attrs)
	return &c
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.scope = h.withGroup(name)
	return &c
}

func (h *journalHandler) Handle(_ context.Context, r slog.Record) error {
	fields := map[string]string{"SYSLOG_IDENTIFIER": Identifier}
	attrs := collect(h.attrs, h.group, r)
	prefix, rest := splitContext(attrs)
	// The message is one line, as in the text handler: journalctl
	// --follow shows it on the console. The fields keep exact values.
	var b strings.Builder
	b.WriteString(escape.Line(prefix))
	b.WriteString(escape.Line(r.Message))
	for _, a := range attrs {
		v := a.Value.Resolve().String()
		if isFieldName(a.Key) {
			fields[a.Key] = v
			continue
		}
		fields["FLINT_"+fieldKey(a.Key)] = v
	}
	for _, a := range rest {
		if isFieldName(a.Key) {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(escape.Line(a.Key))
		b.WriteByte('=')
		b.WriteString(quoteValue(a.Value.Resolve().String()))
	}
	return h.send(b.String(), priority(r.Level), fields)
}

// fieldKey turns an attribute key into the tail of a journal field name.
func fieldKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, k)
}

// priority maps a level to syslog's priorities.
func priority(l slog.Level) journal.Priority {
	switch {
	case l >= LevelCritical:
		return journal.PriCrit
	case l >= slog.LevelError:
		return journal.PriErr
	case l >= slog.LevelWarn:
		return journal.PriWarning
	case l >= slog.LevelInfo:
		return journal.PriInfo
	}
	return journal.PriDebug
}
