package oplog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flintboot/flint/internal/escape"
)

// textHandler writes one line a record:
//
//	2026-01-02T15:04:05.000Z INFO     fetch: provider: [finished] fetching the config duration=12ms
type textHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	level slog.Leveler
	scope
}

// NewTextHandler returns a handler writing human-readable lines to w, for
// records at level or above (nil: info).
func NewTextHandler(w io.Writer, level slog.Leveler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &textHandler{w: w, mu: &sync.Mutex{}, level: level}
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.scope = h.withAttrs(attrs)
	return &c
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.scope = h.withGroup(name)
	return &c
}

// linePool holds the buffers lines are formatted in.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	bp := linePool.Get().(*[]byte)
	b := (*bp)[:0]
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, ' ')
	name := levelName(r.Level)
	b = append(b, name...)
	b = append(b, "         "[len(name):]...)
	// The last stage and op attributes make the prefix, the others
	// follow the message.
	var stage, op string
	h.each(r, func(a slog.Attr) {
		switch a.Key {
		case StageKey:
			stage = a.Value.String()
		case OpKey:
			op = a.Value.String()
		}
	})
	// The message names what an operation works on (a path, a user, a
	// URL from the config): escaped, so that it cannot end the line
	// and forge the next one.
	if stage != "" {
		b = append(append(b, escape.Line(stage)...), ": "...)
	}
	if op != "" {
		b = append(append(b, escape.Line(op)...), ": "...)
	}
	b = append(b, escape.Line(r.Message)...)
	h.each(r, func(a slog.Attr) {
		if a.Key == StageKey || a.Key == OpKey {
			return
		}
		b = append(append(append(b, ' '), escape.Line(a.Key)...), '=')
		b = appendValue(b, a.Value)
	})
	b = append(b, '\n')
	h.mu.Lock()
	_, err := h.w.Write(b)
	h.mu.Unlock()
	*bp = b
	linePool.Put(bp)
	return err
}

// each calls fn with the handler's attributes then the record's, group
// prefixes applied and groups flattened, as collect returns them.
func (s scope) each(r slog.Record, fn func(slog.Attr)) {
	for _, a := range s.attrs {
		fn(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		if s.group == "" && a.Key != "" && a.Value.Kind() != slog.KindGroup && a.Value.Kind() != slog.KindLogValuer {
			fn(a)
			return true
		}
		for _, p := range prefixed(s.group, []slog.Attr{a}) {
			fn(p)
		}
		return true
	})
}

// appendValue appends v as quoteValue writes it.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	}
	return append(b, quoteValue(v.Resolve().String())...)
}

// levelName names a level the way the journal does.
func levelName(l slog.Level) string {
	switch {
	case l >= LevelCritical:
		return "CRITICAL"
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

// scope is what WithAttrs and WithGroup accumulate, the same for every
// handler here.
type scope struct {
	attrs []slog.Attr // with group prefixes applied
	group string      // prefix for later attributes: "g." or ""
}

func (s scope) withAttrs(attrs []slog.Attr) scope {
	return scope{attrs: append(append([]slog.Attr(nil), s.attrs...), prefixed(s.group, attrs)...), group: s.group}
}

func (s scope) withGroup(name string) scope {
	return scope{attrs: s.attrs, group: s.group + name + "."}
}

// collect returns the handler's attributes then the record's, with group
// prefixes applied and groups flattened.
func collect(pre []slog.Attr, group string, r slog.Record) []slog.Attr {
	attrs := append([]slog.Attr(nil), pre...)
	var own []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		own = append(own, a)
		return true
	})
	return append(attrs, prefixed(group, own)...)
}

// prefixed flattens groups into dotted keys under prefix.
func prefixed(prefix string, attrs []slog.Attr) []slog.Attr {
	var out []slog.Attr
	for _, a := range attrs {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			p := prefix
			if a.Key != "" {
				p += a.Key + "."
			}
			out = append(out, prefixed(p, v.Group())...)
			continue
		}
		if a.Key == "" {
			continue
		}
		out = append(out, slog.Attr{Key: prefix + a.Key, Value: v})
	}
	return out
}

// splitContext takes the stage and op attributes (the last of each) out of
// attrs and returns them as a "stage: op: " prefix.
func splitContext(attrs []slog.Attr) (string, []slog.Attr) {
	var stage, op string
	rest := attrs[:0:0]
	for _, a := range attrs {
		switch a.Key {
		case StageKey:
			stage = a.Value.String()
		case OpKey:
			op = a.Value.String()
		default:
			rest = append(rest, a)
		}
	}
	var p string
	if stage != "" {
		p += stage + ": "
	}
	if op != "" {
		p += op + ": "
	}
	return p, rest
}

// quoteValue quotes a value that would not read as one word; quoted, its
// control characters are escaped.
func quoteValue(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\r\"=\\") || !strconv.CanBackquote(s) || escape.Needed(s) {
		return strconv.Quote(s)
	}
	return s
}
