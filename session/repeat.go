package session

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/switchboard-dev/switchboard/permissions"
)

// maxFailures is how often a call with the same name and arguments may fail in one turn before
// the session stops running it (no retry storms).
const maxFailures = 2

// repeatGuard remembers, for one turn, the calls the gate denied and the calls that failed, by
// name and canonical arguments, so that a model repeating them neither floods the user with the
// same approval prompt nor hammers a failing server. Safe for concurrent use.
type repeatGuard struct {
	// mu guards seen.
	mu   sync.Mutex
	seen map[string]*repeatEntry
}

type repeatEntry struct {
	denied   bool
	deniedBy string // "decided by <permissions.By*>" of the first denial
	failures int
}

// active reports whether anything was recorded (until then no call needs its key).
func (g *repeatGuard) active() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen) > 0
}

// refuse returns the result text and the person's reason for a call that must not run again, or
// "" when it may run.
func (g *repeatGuard) refuse(key, name string) (text, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.seen[key]
	switch {
	case e == nil:
		return "", ""
	case e.denied:
		return "Tool call " + name + " was not run: the same call with the same arguments was already denied in this turn (" +
				e.deniedBy + "), so the user is not asked again. Do not repeat it; try another way or ask the user.",
			"The same call was already denied in this turn, so it was not asked again."
	case e.failures >= maxFailures:
		return errorJSON("Tool call " + name + " was not run: it failed twice in this turn with the same arguments. " +
				"Do not repeat it; change the arguments or try another way."),
			"The same call failed twice in this turn, so it was not run again."
	}
	return "", ""
}

// record notes the outcome of a call that ran through callOne.
func (g *repeatGuard) record(key string, isError bool, d permissions.Decision) {
	denied := !d.Allowed && d.By != ByUnknown && d.By != ByInvalid && d.By != permissions.ByCancel
	if !denied && !isError {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[string]*repeatEntry{}
	}
	e := g.seen[key]
	if e == nil {
		e = &repeatEntry{}
		g.seen[key] = e
	}
	if denied {
		if !e.denied {
			e.denied, e.deniedBy = true, "decided by "+d.By
		}
		return
	}
	e.failures++
}

// callKey is a call's identity for the guard: the name and the arguments in canonical JSON (keys
// sorted, no white space, escapes resolved), so reordering keys or adding spaces is the same call.
// Arguments that are not JSON are compared as written.
func callKey(name string, args json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return name + "\x00" + string(args)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return name + "\x00" + string(args)
	}
	return name + "\x00" + string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
