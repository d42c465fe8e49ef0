package session_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// The done event carries the turn's usage (input, cached, output, cost when the model has a
// price) and the conversation's running total.
func TestUsageCachedAndCost(t *testing.T) {
	tools := sessiontest.NewTools().Add("fs", "list", sessiontest.Text("a.go"))
	script := `reply tool_call id=c1 name=mcp__fs__list args={}
reply usage in=1000 out=10 write=900

reply text "one"
reply usage in=1100 cached=900 out=5

reply text "two"
reply usage in=1200 cached=1000 out=7
`
	var prices session.Prices
	if err := json.Unmarshal([]byte(`{"m1":{"input":3,"cachedInput":0.3,"cacheWrite":3.75,"output":15}}`), &prices); err != nil {
		t.Fatal(err)
	}
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll()})
	t.Cleanup(m.Close)
	m.UseProviderPriced(sessiontest.Script(t, script), "m1", &prices)
	conv, evs := runTurnIn(t, m, "", "a")
	done := evs[len(evs)-1]
	want := session.Usage{InputTokens: 2100, CachedInputTokens: 900, CacheWriteTokens: 900, OutputTokens: 15}
	wantCost := (100*3 + 900*3.75 + 10*15 + 200*3 + 900*0.3 + 5*15) / 1e6
	got := *done.Usage
	if math.Abs(got.Cost-wantCost) > 1e-12 {
		t.Errorf("cost = %v, want %v", got.Cost, wantCost)
	}
	got.Cost = 0
	if got != want {
		t.Errorf("turn usage = %+v, want %+v", got, want)
	}
	_, evs = runTurnIn(t, m, conv, "b")
	done = evs[len(evs)-1]
	if done.ConversationUsage == nil || done.ConversationUsage.InputTokens != 3300 || done.ConversationUsage.CachedInputTokens != 1900 ||
		done.ConversationUsage.OutputTokens != 22 {
		t.Errorf("conversation usage = %+v", done.ConversationUsage)
	}
	b, _ := json.Marshal(done)
	var raw map[string]map[string]any
	json.Unmarshal(b, &raw)
	if _, ok := raw["usage"]["cachedInputTokens"]; !ok {
		t.Errorf("event JSON has no usage.cachedInputTokens: %s", b)
	}
}
