package host

import (
	"encoding/json"
	"os"
	"sync"
	"time"
)

// EventsEnv names the environment variable that turns on the events file: when set to a path, the
// host appends one JSON object per line for every notable event, so editor end-to-end tests can
// assert host-side effects without parsing the LSP stream.
//
// Every line has "time" (RFC 3339, UTC, nanoseconds) and "kind"; the other members depend on kind:
//
//	log                {level: "warning"|"error", message}          every window/logMessage
//	showMessage        {type, message}                              every window/showMessage
//	lifecycle          {event: initialize|initialized|shutdown|exit|disconnect}
//	command            {command, error?}                            every workspace/executeCommand
//	approvalRequested  {approval: Approval}
//	approvalResolved   {id, decision, by}
//	toolCallStart      {name, source: "callTool"|"chat", turn?, id?}
//	toolCallEnd        {name, source, isError, decidedBy?, turn?, id?}
//	serverState        {server, state, error?}                      each state change of a server
//	trust              {server, decision: trust|deny, by: prompt|command}
//	viewMessage        {id, tool, sent, reason?, conversation?, turn?, bytes?}  a view's ui/message
//	conversationEnded  {conversation, views}                        switchboard.chat.end, or forgotten
const EventsEnv = "SWITCHBOARD_EVENTS"

// eventsFile appends JSON lines to a file; a nil *eventsFile records nothing. Safe for concurrent use.
type eventsFile struct {
	mu sync.Mutex
	f  *os.File
}

func openEvents(path string) (*eventsFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &eventsFile{f: f}, nil
}

// record writes one line: {"time":..., "kind":kind, fields...}.
func (e *eventsFile) record(kind string, fields map[string]any) {
	if e == nil {
		return
	}
	m := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		m[k] = v
	}
	m["time"] = time.Now().UTC().Format(time.RFC3339Nano)
	m["kind"] = kind
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"time": m["time"], "kind": kind, "marshalError": err.Error()}) // ignore error: plain strings
	}
	b = append(b, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f != nil {
		e.f.Write(b) // ignore error: best-effort test aid
	}
}

func (e *eventsFile) close() {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f != nil {
		e.f.Close() // ignore error
		e.f = nil
	}
}
