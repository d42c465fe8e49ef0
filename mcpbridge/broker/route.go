package broker

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Routing (design §3.3). Upstream ids are the instance's counter; a table maps each back to
// (attachment, the window's id). Nothing is ever keyed by a window's own id alone: two windows
// use the same ids all the time (GHSA-345p-7cg4-v4c7 was a shared transport that did).

// fromServer routes one frame from the server.
func (in *instance) fromServer(data []byte) {
	m, ok := parseMsg(data)
	if !ok {
		in.d.log.Debug("broker: dropped a frame from the server that is not a JSON-RPC message", "name", in.req.Name)
		return
	}
	switch {
	case m.isResponse():
		in.serverResponse(&m)
	case m.isRequest():
		in.serverRequest(&m)
	case m.isNotification():
		in.serverNotification(&m)
	}
}

func (in *instance) serverResponse(m *msg) {
	up, err := strconv.ParseInt(string(m.id), 10, 64)
	if err != nil {
		return // not an id of ours
	}
	in.mu.Lock()
	p := in.dropCall(up)
	if p != nil && p.then != nil {
		p.then(member(m.data, "error") == nil)
	}
	in.mu.Unlock()
	if p != nil && p.att != nil && p.kind != kindPlain {
		// Before the window sees the response: a task's owner is known before its id is.
		in.taskResponse(p, m)
		if p.kind == kindTaskList {
			f := in.filterTaskList(p.att, m, p.down)
			if f == nil {
				f = errorResponse([]byte(p.down), codeInternal, "tasks/list: the server's answer could not be read for sure, so it is not shown (it lists every window's tasks)")
			}
			p.att.send(f)
			return
		}
	}
	switch {
	case p == nil: // cancelled, or its window left: a late result is dropped
	case p.reply != nil:
		p.reply <- bytes.Clone(m.data) // kept past this frame
	case p.att != nil:
		in.scratch = replaceTo(in.scratch, m.data, m.id, p.down)
		p.att.send(in.scratch)
		in.scratch = keep(in.scratch)
	}
}

func (in *instance) serverNotification(m *msg) {
	// A notification that names a task (related-task) is about that task: it goes to no window
	// but the task's, whatever its own routing says (taskFilter).
	may := in.taskFilter(m.params)
	switch m.method {
	case "notifications/progress":
		tok := member(m.params, "progressToken")
		if tok == nil {
			return
		}
		in.mu.Lock()
		p := in.tokens[string(tok)]
		if p == nil {
			if p = in.late[string(tok)]; p != nil {
				if _, attached := in.atts[p.att]; !attached {
					p = nil
				}
			}
		}
		in.mu.Unlock()
		if p != nil && p.att != nil && may(p.att) {
			in.scratch = replaceTo(in.scratch, m.data, tok, p.orig)
			p.att.send(in.scratch)
			in.scratch = keep(in.scratch)
		}
	case "notifications/cancelled": // the server gives up a question it asked a window
		rid := member(m.params, "requestId")
		if rid == nil {
			return
		}
		in.mu.Lock()
		q := in.asked[idKey(rid)]
		delete(in.asked, idKey(rid))
		in.mu.Unlock()
		if q != nil && may(q.att) {
			q.att.send(replace(m.data, rid, strconv.FormatInt(q.down, 10)))
		}
	case "notifications/resources/updated":
		uri, ok := stringMember(m.params, "uri")
		if !ok {
			return
		}
		in.mu.Lock()
		var to []*attachment
		if s := in.subs[uri]; s != nil {
			for a := range s.atts {
				to = append(to, a)
			}
		}
		in.mu.Unlock()
		for _, a := range to {
			if may(a) {
				a.send(m.data)
			}
		}
	case "notifications/elicitation/complete":
		id, ok := stringMember(m.params, "elicitationId")
		if !ok {
			return
		}
		in.mu.Lock()
		a := in.elicits[id]
		delete(in.elicits, id)
		in.mu.Unlock()
		if a != nil && may(a) {
			a.send(m.data)
		}
	case "notifications/tasks/status":
		in.taskStatus(m, may)
	case "notifications/message",
		"notifications/tools/list_changed",
		"notifications/resources/list_changed",
		"notifications/prompts/list_changed":
		in.broadcast(m.data, may)
	default:
		// Anything else may be about one window's call (a task's status, say) and has no rule
		// saying whose: it goes to no one.
		in.d.log.Debug("broker: dropped a notification with no routing rule", "name", in.req.Name, "method", m.method)
	}
}

func (in *instance) broadcast(data []byte, may func(*attachment) bool) {
	in.mu.Lock()
	to := make([]*attachment, 0, len(in.atts))
	for a := range in.atts {
		if may(a) {
			to = append(to, a)
		}
	}
	in.mu.Unlock()
	for _, a := range to {
		a.send(data)
	}
}

// serverRequest answers or routes a request from the server. The daemon's own answers are
// written from a goroutine of their own: this is the server's read loop, and a server blocked
// writing its output while its input is full would otherwise never be read again.
func (in *instance) serverRequest(m *msg) {
	switch m.method {
	case "ping":
		go in.writeUp(response(m.id, "{}"))
	case "roots/list":
		if in.req.Launch.Scope != ScopeWorkspace {
			go in.writeUp(errorResponse(m.id, codeMethodNotFound, "roots/list: this shared server has no roots (it is shared by every window)"))
			return
		}
		folders := in.req.Launch.Folders
		if folders == nil {
			folders = []Folder{}
		}
		go in.writeUp(response(m.id, string(mustJSON(map[string]any{"roots": folders}))))
	case "elicitation/create", "sampling/createMessage":
		in.question(m)
	default:
		go in.writeUp(errorResponse(m.id, codeMethodNotFound, "method not found: "+m.method))
	}
}

// question routes a server's question to the one window with requests in flight. With none, or
// with several, nothing can say whose call asked: the question is refused and never shown, and
// each busy window is told why in one log line. A question that names its task goes to that
// task's window alone (taskQuestion, tasks.go).
func (in *instance) question(m *msg) {
	if task, named := relatedTask(m.params); named {
		in.taskQuestion(m, task)
		return
	}
	in.mu.Lock()
	var busy []*attachment
	for a := range in.atts {
		if a.inflight > 0 {
			busy = append(busy, a)
		}
	}
	if len(busy) == 1 {
		a := busy[0]
		f := in.askLocked(a, m)
		in.mu.Unlock()
		a.send(f)
		return
	}
	in.mu.Unlock()
	go in.writeUp(refusal(m.method, m.id))
	what := "answered cancel"
	if m.method == "sampling/createMessage" {
		what = "refused it"
	}
	line := notification("notifications/message", map[string]any{
		"level": "warning", "logger": "switchboard",
		"data": fmt.Sprintf("shared server %s asked a question (%s) while several windows were using it; %s. Set \"shared\": false to get its questions", in.req.Name, m.method, what),
	})
	for _, a := range busy {
		a.send(line)
	}
	in.logRefused("broker: refused a question no window could be named for (said once per server)", "method", m.method, "busy", len(busy))
}

// askLocked records the server's question m as put to a and returns the frame a gets. in.mu held.
func (in *instance) askLocked(a *attachment, m *msg) []byte {
	a.nextAsk++
	q := &asked{att: a, down: a.nextAsk, up: bytes.Clone(m.id), method: m.method}
	if mode, _ := stringMember(m.params, "mode"); mode == "url" && m.method == "elicitation/create" {
		if id, ok := stringMember(m.params, "elicitationId"); ok {
			q.elicit = id
			in.elicits[id] = a
		}
	}
	in.asked[idKey(m.id)] = q
	return replace(m.data, m.id, strconv.FormatInt(q.down, 10))
}

// logRefused logs a refused question once per instance (then at debug level): a server asking
// in a loop must not fill the user's disk through the daemon's log.
func (in *instance) logRefused(line string, args ...any) {
	level := slog.LevelDebug
	if !in.refusedLogged.Swap(true) {
		level = slog.LevelInfo
	}
	in.d.log.Log(context.Background(), level, line, append([]any{"name", in.req.Name}, args...)...)
}

// fromWindow routes one frame from a window.
func (in *instance) fromWindow(a *attachment, data []byte) {
	m, ok := parseMsg(data)
	if !ok {
		in.d.log.Debug("broker: dropped a frame from a window that is not a JSON-RPC message")
		return
	}
	switch {
	case m.isRequest():
		if why := misspelt(m.method); why != "" {
			a.send(errorResponse(m.id, codeMethodNotFound, why))
			return
		}
		if skeletonHasPrefix(m.method, "notifications") {
			// Relayed, it would reach the server untranslated (a cancellation's requestId is the
			// instance's counter, another window's call's id), and a server that goes by the
			// method alone would act on it.
			a.send(errorResponse(m.id, codeMethodNotFound, "method "+strconv.QuoteToASCII(m.method)+" not relayed to a shared server: a notification's method, sent as a request"))
			return
		}
		if why := in.foreignTask(a, m.params); why != "" && !strings.HasPrefix(m.method, "tasks/") {
			// (A task method names its task in taskId: taskRequest checks both agree, and may
			// let a window take the task over first.)
			a.send(errorResponse(m.id, codeInvalidParams, m.method+": not relayed to a shared server: "+why))
			return
		}
		switch m.method {
		case "initialize":
			a.send(response(m.id, string(in.init)))
		case "ping":
			a.send(response(m.id, "{}"))
		case "logging/setLevel":
			// One window may not change what every window's server logs.
			a.send(response(m.id, "{}"))
		case "resources/subscribe":
			in.subscribe(a, &m)
		case "resources/unsubscribe":
			in.unsubscribe(a, &m)
		case "tools/call":
			in.forwardAs(a, &m, nil, kindCall, "")
		default:
			if strings.HasPrefix(m.method, "tasks/") {
				in.taskRequest(a, &m) // tasks.go: only the window's own tasks
				return
			}
			in.forward(a, &m, nil)
		}
	case m.isNotification():
		if m.method == "notifications/cancelled" && in.foreignTask(a, m.params) == "" {
			in.cancel(a, &m)
		}
		// initialized was sent once by the daemon; roots never change (workspace scope) or are
		// not declared (user scope); a window's progress is not the server's business.
	case m.isResponse():
		in.answer(a, &m)
	}
}

// forward sends a window's request upstream under a fresh id, and a fresh progress token when it
// has one.
func (in *instance) forward(a *attachment, m *msg, then func(ok bool)) {
	in.forwardAs(a, m, then, kindPlain, "")
}

// forwardAs is forward of a request whose response the daemon reads (kind, tasks.go); task is
// the task it names.
func (in *instance) forwardAs(a *attachment, m *msg, then func(ok bool), kind uint8, task string) {
	tok, ok := progressToken(m.params)
	if !ok {
		// The server might read another token than the one this daemon would replace: another
		// window's, whose progress it would then report with this call's.
		a.send(errorResponse(m.id, codeInvalidParams, "the request names its progress token ambiguously (twice, escaped, or in another case)"))
		return
	}
	in.mu.Lock()
	if in.pending == nil {
		in.mu.Unlock()
		a.send(errorResponse(m.id, codeServerGone, "the shared server is not running"))
		return
	}
	if _, ok := in.atts[a]; !ok {
		in.mu.Unlock()
		return
	}
	if a.inflight >= maxInflight {
		in.mu.Unlock()
		a.send(errorResponse(m.id, codeInternal, fmt.Sprintf("more than %d requests in flight on a shared server", maxInflight)))
		return
	}
	if _, dup := a.calls[string(m.id)]; dup {
		in.mu.Unlock()
		a.send(errorResponse(m.id, codeInvalidParams, "a request with this id is already in flight"))
		return
	}
	in.nextID++
	up := in.nextID
	p := &pending{att: a, down: string(m.id), then: then, kind: kind, task: task}
	if kind == kindTask {
		p.method = m.method // one of knownMethods: no copy
	}
	var edits [2]edit
	edits[0] = edit{at: off(m.data, m.id), n: len(m.id), with: strconv.FormatInt(up, 10)}
	n := 1
	if tok != nil {
		p.token = `"sb-` + edits[0].with + `"`
		p.orig = string(tok)
		in.tokens[p.token] = p
		edits[1] = edit{at: off(m.data, tok), n: len(tok), with: p.token}
		n++
	}
	in.pending[up] = p
	a.calls[p.down] = up
	a.inflight++
	in.mu.Unlock()
	// a.scratch: forward runs on a's read loop only (fromWindow), and writeUp keeps nothing.
	a.scratch = spliceTo(a.scratch, m.data, edits[:n])
	in.writeUp(a.scratch)
	a.scratch = keep(a.scratch)
}

// progressToken is params._meta.progressToken (nil: none); ok is false when _meta or the token
// is named ambiguously (see lookup).
func progressToken(params []byte) (tok []byte, ok bool) {
	if params == nil {
		return nil, true
	}
	meta, ambiguous := lookup(params, "_meta")
	if ambiguous {
		return nil, false
	}
	if meta == nil {
		return nil, true
	}
	tok, ambiguous = lookup(meta, "progressToken")
	return tok, !ambiguous
}

// cancel translates a window's notifications/cancelled to the upstream id; the call is forgotten
// at once (its late result is dropped, as the window expects).
func (in *instance) cancel(a *attachment, m *msg) {
	rid := member(m.params, "requestId")
	if rid == nil {
		return
	}
	in.mu.Lock()
	up, ok := a.calls[string(rid)]
	if ok {
		in.dropCall(up)
	}
	in.mu.Unlock()
	if ok {
		in.writeUp(replace(m.data, rid, strconv.FormatInt(up, 10)))
	}
}

// answer relays a window's answer to a question routed to that window; any other id is dropped,
// so a window can neither answer nor learn another window's question.
func (in *instance) answer(a *attachment, m *msg) {
	down, err := strconv.ParseInt(string(m.id), 10, 64)
	if err != nil {
		return
	}
	in.mu.Lock()
	var q *asked
	for k, x := range in.asked {
		if x.att == a && x.down == down {
			q = x
			delete(in.asked, k)
			break
		}
	}
	in.mu.Unlock()
	if q == nil {
		return
	}
	if why := in.foreignTask(a, member(m.data, "result")); why != "" {
		// The server still gets an answer: it may wait for one.
		in.writeUp(errorResponse(q.up, codeInvalidParams, q.method+": the window's answer was not relayed: "+why))
		return
	}
	in.writeUp(replace(m.data, m.id, string(q.up)))
}

// subscribe counts subscribers per uri: the server hears of the first (and of any while it has
// not confirmed one); later subscribers are answered by the daemon.
func (in *instance) subscribe(a *attachment, m *msg) {
	uri, ok := stringMember(m.params, "uri")
	if !ok {
		a.send(errorResponse(m.id, codeInvalidParams, "resources/subscribe needs a uri"))
		return
	}
	in.mu.Lock()
	if in.subs == nil {
		in.mu.Unlock()
		a.send(errorResponse(m.id, codeServerGone, "the shared server is not running"))
		return
	}
	s := in.subs[uri]
	if s == nil {
		s = &sub{atts: map[*attachment]bool{}}
		in.subs[uri] = s
	}
	s.atts[a] = true
	confirmed := s.upstream
	in.mu.Unlock()
	if confirmed {
		a.send(response(m.id, "{}"))
		return
	}
	in.forward(a, m, func(ok bool) { // in.mu held
		switch {
		case !ok:
			delete(s.atts, a)
			if len(s.atts) == 0 && in.subs[uri] == s {
				delete(in.subs, uri)
			}
		case in.subs[uri] != s:
			// Every subscriber left while the server was confirming: undo it.
			if f, _ := in.ownFrameLocked("resources/unsubscribe", mustJSON(map[string]string{"uri": uri})); f != nil {
				go in.writeUp(f)
			}
		default:
			s.upstream = true
		}
	})
}

// unsubscribe tells the server only when the last subscriber leaves.
func (in *instance) unsubscribe(a *attachment, m *msg) {
	uri, ok := stringMember(m.params, "uri")
	if !ok {
		a.send(errorResponse(m.id, codeInvalidParams, "resources/unsubscribe needs a uri"))
		return
	}
	in.mu.Lock()
	s := in.subs[uri]
	if s == nil || !s.atts[a] {
		in.mu.Unlock()
		a.send(response(m.id, "{}"))
		return
	}
	delete(s.atts, a)
	last := len(s.atts) == 0
	if last {
		delete(in.subs, uri)
	}
	in.mu.Unlock()
	if last && s.upstream {
		in.forward(a, m, nil)
		return
	}
	a.send(response(m.id, "{}"))
}
