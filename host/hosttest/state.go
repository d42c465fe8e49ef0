package hosttest

import (
	"encoding/json"
	"strings"
	"sync"
)

// State is everything the host sent to the editor so far, in order.
type State struct {
	// Notifications from the host, in arrival order.
	Notifications []Message
	// Requests from the host (showMessageRequest, workDoneProgress/create, applyEdit), in order.
	Requests []Message
	// Responses are every response the host sent, in order (including the error replies to
	// malformed frames, id "null").
	Responses []Response
}

// Response is one response frame from the host.
type Response struct {
	ID      string // raw JSON id: `1`, `"c1"`, `null`
	Result  json.RawMessage
	Code    int64 // 0 = success
	Message string
}

// Response returns the first response with this raw id.
func (s *State) Response(id string) (Response, bool) {
	for _, r := range s.Responses {
		if r.ID == id {
			return r, true
		}
	}
	return Response{}, false
}

type stateBox struct {
	mu      sync.Mutex
	st      State
	changed chan struct{} // closed and replaced on every change
}

func newStateBox() *stateBox { return &stateBox{changed: make(chan struct{})} }

func (b *stateBox) addResponse(r Response) {
	b.mu.Lock()
	b.st.Responses = append(b.st.Responses, r)
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

func (b *stateBox) add(m Message, request bool) {
	b.mu.Lock()
	if request {
		b.st.Requests = append(b.st.Requests, m)
	} else {
		b.st.Notifications = append(b.st.Notifications, m)
	}
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// snapshot returns a copy of the state and the channel closed at the next change.
func (b *stateBox) snapshot() (*State, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &State{
		Notifications: append([]Message(nil), b.st.Notifications...),
		Requests:      append([]Message(nil), b.st.Requests...),
		Responses:     append([]Response(nil), b.st.Responses...),
	}
	return st, b.changed
}

// Params returns the params of every notification with this method, in order.
func (s *State) Params(method string) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range s.Notifications {
		if m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// RequestParams returns the params of every host→editor request with this method.
func (s *State) RequestParams(method string) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range s.Requests {
		if m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// ServerStatus is the wire ServerStatus (the fields tests look at).
type ServerStatus struct {
	Name       string `json:"name"`
	State      string `json:"state"`
	Transport  string `json:"transport"`
	Source     string `json:"source"`
	Tools      int    `json:"tools"`
	Error      string `json:"error"`
	StderrTail string `json:"stderrTail"`
}

// Servers is the list of the latest switchboard/serversChanged (nil before the first).
func (s *State) Servers() []ServerStatus {
	all := s.Params("switchboard/serversChanged")
	if len(all) == 0 {
		return nil
	}
	var p struct {
		Servers []ServerStatus `json:"servers"`
	}
	json.Unmarshal(all[len(all)-1], &p) // ignore error: a test failing on content shows the log
	return p.Servers
}

// Server returns the latest status of one server.
func (s *State) Server(name string) (ServerStatus, bool) {
	for _, st := range s.Servers() {
		if st.Name == name {
			return st, true
		}
	}
	return ServerStatus{}, false
}

// Approval is the wire Approval.
type Approval struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Server    string          `json:"server"`
	Arguments json.RawMessage `json:"arguments"`
	Mode      string          `json:"mode"`
	Turn      string          `json:"turn"`
}

// Approvals returns every switchboard/approvalRequested, in order.
func (s *State) Approvals() []Approval {
	return decodeAll[Approval](s.Params("switchboard/approvalRequested"))
}

// Resolved is switchboard/approvalResolved's params.
type Resolved struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
	By       string `json:"by"`
}

// Resolutions returns every switchboard/approvalResolved, in order.
func (s *State) Resolutions() []Resolved {
	return decodeAll[Resolved](s.Params("switchboard/approvalResolved"))
}

// Elicitation is switchboard/elicitationRequested's params (fields kept raw).
type Elicitation struct {
	ID      string            `json:"id"`
	Server  string            `json:"server"`
	Message string            `json:"message"`
	Fields  []json.RawMessage `json:"fields"`
}

// Elicitations returns every switchboard/elicitationRequested, in order.
func (s *State) Elicitations() []Elicitation {
	return decodeAll[Elicitation](s.Params("switchboard/elicitationRequested"))
}

// ElicitationResolved is switchboard/elicitationResolved's params.
type ElicitationResolved struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	By     string `json:"by"`
}

// ElicitationsResolved returns every switchboard/elicitationResolved, in order.
func (s *State) ElicitationsResolved() []ElicitationResolved {
	return decodeAll[ElicitationResolved](s.Params("switchboard/elicitationResolved"))
}

// Event is switchboard/event's params (the fields tests look at; Raw has all of it).
type Event struct {
	Turn         string `json:"turn"`
	Conversation string `json:"conversation"`
	Kind         string `json:"kind"`
	Text         string `json:"text"`
	StopReason   string `json:"stopReason"`
	Error        string `json:"error"`
	ToolCall     *struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Approval  string `json:"approval"`
		DecidedBy string `json:"decidedBy"`
		Label     string `json:"label"`
	} `json:"toolCall"`
	Result *struct {
		Name    string `json:"name"`
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
		Summary string `json:"summary"`
	} `json:"result"`
	Raw json.RawMessage `json:"-"`
}

// Events returns the switchboard/event notifications of a turn ("" = all).
func (s *State) Events(turn string) []Event {
	raws := s.Params("switchboard/event")
	var out []Event
	for i, e := range decodeAll[Event](raws) {
		e.Raw = raws[i]
		if turn == "" || e.Turn == turn {
			out = append(out, e)
		}
	}
	return out
}

// MessageParams is window/showMessage and window/logMessage's params.
type MessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// Messages returns the window/showMessage (or window/logMessage) params containing substr.
func (s *State) Messages(method, substr string) []MessageParams {
	var out []MessageParams
	for _, m := range decodeAll[MessageParams](s.Params(method)) {
		if strings.Contains(m.Message, substr) {
			out = append(out, m)
		}
	}
	return out
}

// decodeAll decodes each params value as T. A value that does not decode stays the zero T (in
// its place, so indexes match): a test failing on content shows the JSON-RPC log.
func decodeAll[T any](raws []json.RawMessage) []T {
	out := make([]T, len(raws))
	for i, raw := range raws {
		json.Unmarshal(raw, &out[i]) // ignore error: see above
	}
	return out
}
