package host

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/permissions"
)

// TestQuestions: one queue for every kind; ids by kind, oldest first; answered once; the first of
// an answer and the deadline wins, and everyone (the asker, the UI's Resolved) sees that one.
func TestQuestions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var resolved []string
		qs := newQuestions(time.Now, func(q *Question) { resolved = append(resolved, q.ID+":"+q.Outcome().By) })
		a1 := qs.open(KindApproval, time.Second, func(*Question) {})
		e1 := qs.open(KindElicitation, time.Second, func(q *Question) {
			q.check = func(r Reply) error {
				if r.Elicit.Action == "" {
					return errors.New("no action")
				}
				return nil
			}
		})
		a2 := qs.open(KindApproval, time.Second, func(*Question) {})
		if a1.ID != "a1" || e1.ID != "e1" || a2.ID != "a2" || !a1.Deadline.Equal(a1.Requested.Add(time.Second)) {
			t.Fatalf("ids %s %s %s, deadline %v", a1.ID, e1.ID, a2.ID, a1.Deadline)
		}
		if got := qs.Pending(KindApproval); len(got) != 2 || got[0] != a1 || got[1] != a2 {
			t.Errorf("pending approvals = %v, want a1, a2", got)
		}

		// A reply that does not fit leaves the question pending.
		if err := e1.Answer(Reply{}); err == nil || len(qs.Pending(KindElicitation)) != 1 {
			t.Errorf("bad reply: %v, pending %d", err, len(qs.Pending(KindElicitation)))
		}
		// Answered once: the second answer fails, the deadline then changes nothing.
		if err := a1.Answer(Reply{Decision: permissions.AnswerOnce}); err != nil {
			t.Fatal(err)
		}
		if err := a1.Answer(Reply{Decision: permissions.AnswerDeny}); !errors.Is(err, ErrNotPending) {
			t.Errorf("second answer: %v, want ErrNotPending", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if o := a1.wait(ctx, nil); o.By != ByUser || o.Reply.Decision != permissions.AnswerOnce {
			t.Errorf("a1 outcome = %+v, want once by user", o)
		}
		// The deadline first: an answer after it is refused.
		if o := a2.wait(ctx, nil); o.By != ByTimeout {
			t.Errorf("a2 outcome = %+v, want timeout", o)
		}
		if err := a2.Answer(Reply{Decision: permissions.AnswerOnce}); !errors.Is(err, ErrNotPending) {
			t.Errorf("answer after the timeout: %v, want ErrNotPending", err)
		}
		// Cancel all: the front end is gone.
		qs.CancelAll(ByDisconnect)
		<-e1.Done()
		if o := e1.Outcome(); o.By != ByDisconnect {
			t.Errorf("e1 outcome = %+v, want disconnect", o)
		}
		want := []string{"a1:user", "a2:timeout", "e1:disconnect"}
		if len(resolved) != len(want) {
			t.Fatalf("resolved %v, want %v", resolved, want)
		}
		for i := range want {
			if resolved[i] != want[i] {
				t.Errorf("resolved %v, want %v", resolved, want)
				break
			}
		}
	})
}
