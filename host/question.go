package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
)

// Kind is what a Question asks.
type Kind string

// The kinds of question, with the letter of their ids ("a1", "e2", "s3", "t4").
const (
	KindApproval    Kind = "approval"    // may this tool call run? (the confirm gate)
	KindElicitation Kind = "elicitation" // a server's question: a form, or a page to open
	KindSampling    Kind = "sampling"    // may this server use the model?
	KindTrust       Kind = "trust"       // may this workspace-defined server start?
	KindSignIn      Kind = "signIn"      // sign in to this server now? (OAuth, signin.go)
	KindPin         Kind = "pin"         // accept a server's changed tool definitions? (pins.go)
	KindInput       Kind = "input"       // the value of a config file's ${input:ID} (inputs.go)
	KindViewMessage Kind = "viewMessage" // send this message of a view to the chat? (viewmessage.go)
)

var idLetter = map[Kind]string{KindApproval: "a", KindElicitation: "e", KindSampling: "s", KindTrust: "t", KindSignIn: "o", KindPin: "p", KindInput: "i", KindViewMessage: "m"}

// Who or what resolved a question (Outcome.By).
const (
	ByUser       = "user"
	ByTimeout    = "timeout"
	ByCancelled  = "cancelled"
	ByDisconnect = "disconnect"
)

// Reply is the person's answer; the field of the question's kind is the one that counts.
type Reply struct {
	Decision permissions.Answer     // approval
	Elicit   mcpbridge.ElicitResult // elicitation
	Allow    bool                   // sampling (allow this time), trust (trust it), signIn (sign in now), pin (accept all shown), viewMessage (send it)
	Always   bool                   // sampling: allow this server until the host exits
	Value    string                 // input: the value typed or picked (a secret: never logged)
}

// Outcome is how a question ended: the reply (zero, meaning deny/cancel/refuse, unless By is
// ByUser) and who or what gave it.
type Outcome struct {
	Reply Reply
	By    string
}

// Question is one pending question to the person, of any kind. It is answered once: the first of
// Answer (the person, from any front end), its deadline, the asker giving up, or CancelAll wins,
// under the queue's lock; every other way out then learns that outcome. Its fields are set before
// the front end sees it and never change.
type Question struct {
	ID        string
	Kind      Kind
	Requested time.Time
	Deadline  time.Time
	// Text is the question as one paragraph for a person, escaped (safetext).
	Text string

	Approval    permissions.Request     // KindApproval
	Arguments   json.RawMessage         // KindApproval: the arguments as a JSON object (approvalArguments)
	Elicitation mcpbridge.Elicitation   // KindElicitation (Fields as shown: labels escaped)
	Sample      mcpbridge.SampleRequest // KindSampling
	Server      config.ServerConfig     // KindTrust, KindSignIn, KindInput
	Pins        ServerPinChanges        // KindPin: the changes shown (accepting accepts exactly these)
	Input       config.Input            // KindInput: the input asked for (ID and Description escaped)
	ViewMessage ViewMessageAsk          // KindViewMessage: the view and its message as shown

	qs    *Questions
	check func(Reply) error // validates a person's reply (elicitation forms); nil = any
	// ended, when set, runs once with the outcome before the front end is told (UI.Resolved):
	// what the asker's bookkeeping frees (a view's one open question) is free by the time anyone
	// sees the question resolved.
	ended   func(Outcome)
	done    chan struct{} // closed once resolved
	outcome Outcome       // set before done is closed
}

// Done is closed when the question has been resolved.
func (q *Question) Done() <-chan struct{} { return q.done }

// Outcome is how the question ended; valid once Done is closed, and inside UI.Resolved (which
// runs just before Done is closed, so that the front end announces the outcome before the asker
// acts on it).
func (q *Question) Outcome() Outcome { return q.outcome }

// Answer is the person's reply. It fails when the reply does not fit the question (the question
// stays pending, so the person can answer again) or when the question was already resolved.
func (q *Question) Answer(r Reply) error {
	if q.check != nil {
		if err := q.check(r); err != nil {
			return err
		}
	}
	if !q.qs.resolve(q, Outcome{Reply: r, By: ByUser}) {
		return ErrNotPending
	}
	return nil
}

// ErrNotPending is Answer's error for a question that is unknown or already resolved (answered,
// timed out, cancelled).
var ErrNotPending = errors.New("host: no such pending question (unknown, already answered or timed out)")

// Gone says nobody can answer q any more (the front end's input ended): it ends as by
// disconnect, and the gate records that, never a denial by the person.
func (q *Question) Gone() { q.qs.resolve(q, Outcome{By: ByDisconnect}) }

// Dismiss says the person closed the question without answering: it ends as cancelled.
func (q *Question) Dismiss() { q.qs.resolve(q, Outcome{By: ByCancelled}) }

// wait blocks until the question is resolved, ctx ends (resolved then by timeout when ctx's
// deadline passed, else as cancelled) or gone is closed (resolved by disconnect). The first
// resolution wins: an answer taken just before the deadline is the outcome.
func (q *Question) wait(ctx context.Context, gone <-chan struct{}) Outcome {
	select {
	case <-q.done:
	case <-ctx.Done():
		by := ByCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			by = ByTimeout
		}
		q.qs.resolve(q, Outcome{By: by}) // false when answered just before: that answer stands
	case <-gone:
		q.qs.resolve(q, Outcome{By: ByDisconnect})
	}
	<-q.done
	return q.outcome
}

// Questions is the one queue of pending questions. Safe for concurrent use.
type Questions struct {
	now      func() time.Time
	resolved func(*Question) // called once per question, after it is resolved, outside the lock

	mu      sync.Mutex // guards seq, pending
	seq     map[Kind]int
	pending map[string]*Question
}

func newQuestions(now func() time.Time, resolved func(*Question)) *Questions {
	return &Questions{now: now, resolved: resolved, seq: map[Kind]int{}, pending: map[string]*Question{}}
}

// open registers a question of kind k that waits at most timeout; fill sets its contents.
func (qs *Questions) open(k Kind, timeout time.Duration, fill func(*Question)) *Question {
	q := &Question{Kind: k, qs: qs, done: make(chan struct{})}
	fill(q)
	q.Requested = qs.now()
	if q.Deadline.IsZero() && timeout > 0 {
		q.Deadline = q.Requested.Add(timeout)
	}
	qs.mu.Lock()
	qs.seq[k]++
	q.ID = idLetter[k] + strconv.Itoa(qs.seq[k])
	qs.pending[q.ID] = q
	qs.mu.Unlock()
	return q
}

// resolve ends q with o; false when q was resolved before.
func (qs *Questions) resolve(q *Question, o Outcome) bool {
	qs.mu.Lock()
	if qs.pending[q.ID] != q {
		qs.mu.Unlock()
		return false
	}
	delete(qs.pending, q.ID)
	q.outcome = o
	qs.mu.Unlock()
	if q.ended != nil {
		q.ended(o)
	}
	if qs.resolved != nil {
		qs.resolved(q)
	}
	close(q.done)
	return true
}

// Get returns the pending question id.
func (qs *Questions) Get(id string) (*Question, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q, ok := qs.pending[id]
	return q, ok
}

// Pending returns the pending questions of kind k, oldest first.
func (qs *Questions) Pending(k Kind) []*Question {
	qs.mu.Lock()
	var out []*Question
	for _, q := range qs.pending {
		if q.Kind == k {
			out = append(out, q)
		}
	}
	qs.mu.Unlock()
	seq := func(q *Question) int {
		n, _ := strconv.Atoi(q.ID[1:]) // ignore error: our own ids
		return n
	}
	slices.SortFunc(out, func(x, y *Question) int { return seq(x) - seq(y) })
	return out
}

// CancelAll resolves every pending question as by (shutdown, the editor gone).
func (qs *Questions) CancelAll(by string) {
	qs.mu.Lock()
	all := make([]*Question, 0, len(qs.pending))
	for _, q := range qs.pending {
		all = append(all, q)
	}
	qs.mu.Unlock()
	for _, q := range all {
		qs.resolve(q, Outcome{By: by})
	}
}

func (k Kind) String() string { return string(k) }
