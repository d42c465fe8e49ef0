package permissions

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPinStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "pins.json")
	p, err := OpenPinStore(path)
	if err != nil {
		t.Fatal(err)
	}
	id := json.RawMessage(`{"transport":"stdio","command":"srv"}`)
	if err := p.Pin("gh", id, map[string]PinnedTool{"a": {Hash: "h1", Definition: json.RawMessage(`{"name":"a"}`)}, "b": {Hash: "h2"}}); err != nil {
		t.Fatal(err)
	}
	// Another process's view (a second store on the same file) sees it.
	q, _ := OpenPinStore(path)
	got, err := q.Load()
	if err != nil || got["gh"].Tools["a"].Hash != "h1" || got["gh"].Tools["a"].At.IsZero() || !jsonEqual(got["gh"].Identity, id) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if err := q.Unpin("gh", "a"); err != nil {
		t.Fatal(err)
	}
	got, _ = p.Load()
	if _, ok := got["gh"].Tools["a"]; ok || got["gh"].Tools["b"].Hash != "h2" {
		t.Fatalf("after Unpin a: %+v", got)
	}
	if err := p.Unpin("gh"); err != nil {
		t.Fatal(err)
	}
	if got, _ = p.Load(); len(got) != 0 {
		t.Fatalf("after Unpin server: %+v", got)
	}
}

// A broken pin file pins nothing and is never overwritten.
func TestPinStoreBrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	const broken = "{\"version\":1,\n\"servers\": {oops}\n"
	writeFile(t, path, broken)
	p, _ := OpenPinStore(path)
	if p.Err() == nil || !strings.Contains(p.Err().Error(), "pins.json:2") {
		t.Fatalf("Err = %v, want the file and line", p.Err())
	}
	got, err := p.Load()
	if err == nil || len(got) != 0 {
		t.Fatalf("Load = %v, %v", got, err)
	}
	if err := p.Pin("gh", nil, map[string]PinnedTool{"a": {Hash: "h"}}); err == nil {
		t.Fatal("Pin over a broken file succeeded")
	}
	if err := p.Unpin("gh"); err == nil {
		t.Fatal("Unpin over a broken file succeeded")
	}
	if readFile(t, path) != broken {
		t.Fatal("the broken file was overwritten")
	}
}

// A held tool is refused under every mode, an allowlist entry included, by "pin".
func TestGatePinHoldEveryMode(t *testing.T) {
	dir := t.TempDir()
	al, _ := OpenAllowlist(filepath.Join(dir, "allow_tool"))
	if err := al.Add(testTool); err != nil {
		t.Fatal(err)
	}
	pr := &fakePrompter{ans: AnswerOnce}
	g := NewGate(GateOptions{Allowlist: al, Prompter: pr, Pins: func(r Request) PinVerdict {
		return PinVerdict{Hold: r.Tool == testTool, Reason: "definition changed since you approved it"}
	}})
	for _, m := range []Mode{SingleConfirm, AlwaysAllow, AllowlistOnly} {
		d, err := g.Check(context.Background(), Request{Tool: testTool, Server: "github", Mode: m})
		if err != nil || d.Allowed || d.By != ByPin || !strings.Contains(d.Reason, "definition changed") {
			t.Errorf("mode %v: %+v, %v", m, d, err)
		}
	}
	if pr.calls != 0 {
		t.Errorf("the user was asked %d times about a held tool", pr.calls)
	}
}

// A new tool under a whole-server grant (or always-allow) asks before its first run; an approval
// pins it.
func TestGatePinNewToolAsks(t *testing.T) {
	dir := t.TempDir()
	al, _ := OpenAllowlist(filepath.Join(dir, "allow_tool"))
	if err := al.Add("mcp__github__*"); err != nil {
		t.Fatal(err)
	}
	approved := 0
	pins := func(r Request) PinVerdict {
		return PinVerdict{Ask: true, Reason: "new tool since you allowed this server", Approved: func() { approved++ }}
	}
	for _, tc := range []struct {
		mode    Mode
		ans     Answer
		allowed bool
		by      string
		asked   int
	}{
		{SingleConfirm, AnswerOnce, true, ByUser, 1},
		{AlwaysAllow, AnswerOnce, true, ByUser, 1},
		{SingleConfirm, AnswerDeny, false, ByUser, 1},
		{AllowlistOnly, AnswerOnce, false, ByPin, 0},
	} {
		approved = 0
		pr := &fakePrompter{ans: tc.ans}
		g := NewGate(GateOptions{Allowlist: al, Prompter: pr, Pins: pins})
		d, _ := g.Check(context.Background(), Request{Tool: testTool, Server: "github", Mode: tc.mode})
		if d.Allowed != tc.allowed || d.By != tc.by || pr.calls != tc.asked {
			t.Errorf("mode %v answer %v: %+v, asked %d", tc.mode, tc.ans, d, pr.calls)
		}
		if want := map[bool]int{true: 1, false: 0}[tc.allowed]; approved != want {
			t.Errorf("mode %v answer %v: Approved called %d times", tc.mode, tc.ans, approved)
		}
	}
	// An exact grant of the tool still counts.
	if err := al.add(testTool, true); err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{Allowlist: al, Prompter: &fakePrompter{}, Pins: pins})
	if d, _ := g.Check(context.Background(), Request{Tool: testTool, Server: "github", Mode: SingleConfirm}); !d.Allowed || d.By != ByAllowlist {
		t.Errorf("exact grant: %+v", d)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// PinFirst writes a server's first-seen pins only when the file has no record of it: a late
// first-seen write never replaces pins that were accepted (or written by another process) first.
func TestPinFirstNeverReplaces(t *testing.T) {
	p, err := OpenPinStore(filepath.Join(t.TempDir(), "pins.json"))
	if err != nil {
		t.Fatal(err)
	}
	v1 := map[string]PinnedTool{"echo": {Hash: "h1"}}
	v2 := map[string]PinnedTool{"echo": {Hash: "h2"}}
	if err := p.PinFirst("s", nil, v1); err != nil {
		t.Fatal(err)
	}
	if err := p.Pin("s", nil, v2); err != nil { // the person accepted a change
		t.Fatal(err)
	}
	if err := p.PinFirst("s", nil, v1); err != nil { // a first-seen write that was queued behind
		t.Fatal(err)
	}
	got, err := p.Load()
	if err != nil || got["s"].Tools["echo"].Hash != "h2" {
		t.Fatalf("pins = %+v, %v; want the accepted h2 kept", got, err)
	}
}
