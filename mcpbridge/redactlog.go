package mcpbridge

import (
	"context"
	"fmt"
	"log/slog"
)

// redactHandler passes every record to next with its message, attribute keys and attribute
// values (groups, errors and any other value as its text) passed through redact first: the
// handler given to mcp-go and to a server's own log lines, whose text may hold the resolved URL,
// headers or arguments.
type redactHandler struct {
	next   slog.Handler
	redact func(string) string
}

func newRedactHandler(next slog.Handler, redact func(string) string) slog.Handler {
	return &redactHandler{next: next, redact: redact}
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &redactHandler{next: h.next.WithAttrs(red), redact: h.redact}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{next: h.next.WithGroup(h.redact(name)), redact: h.redact}
}

func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	k := h.redact(a.Key)
	switch v.Kind() {
	case slog.KindString:
		return slog.String(k, h.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(k, red...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(k, h.redact(err.Error()))
		}
		return slog.String(k, h.redact(fmt.Sprintf("%+v", v.Any())))
	}
	return slog.Attr{Key: k, Value: v}
}
