//go:build unix

package broker

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTwoWindowsOwnFrames: two windows use the same request ids and the same progress token on
// one instance at once; each gets only its own results and progress.
func TestTwoWindowsOwnFrames(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch())
	a := attachWin(t, "A", cfg, req)
	b := attachWin(t, "B", cfg, req)
	if a.c.Instance() != b.c.Instance() || a.c.ServerPid() != b.c.ServerPid() {
		t.Fatalf("two windows with one launch got instances %s (pid %d) and %s (pid %d)",
			a.c.Instance(), a.c.ServerPid(), b.c.Instance(), b.c.ServerPid())
	}
	if b.c.Windows() != 2 {
		t.Errorf("B attached as window %d, want 2", b.c.Windows())
	}
	a.initialize()
	b.initialize()
	for _, w := range []*win{a, b} {
		steps := map[string]int{"A": 3, "B": 5}[w.name]
		w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0,"steps":%d},"_meta":{"progressToken":"tok"}}}`, steps)
		w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"from %s"}}}`, w.name)
	}
	for _, w := range []*win{a, b} {
		steps := map[string]int{"A": 3, "B": 5}[w.name]
		progress, results := 0, map[string]string{}
		for len(results) < 2 || progress < steps { // mcp-go's server may send progress after the result
			f := w.next()
			switch {
			case f.Method == "notifications/progress":
				var p struct {
					Token json.RawMessage `json:"progressToken"`
					Total int             `json:"total"`
				}
				json.Unmarshal(f.Params, &p)
				if string(p.Token) != `"tok"` || p.Total != steps {
					t.Errorf("%s got progress %s: not its own (token \"tok\", total %d)", w.name, f.Params, steps)
				}
				progress++
			case f.Method == "":
				results[string(f.ID)] = text(f)
			}
		}
		if progress != steps {
			t.Errorf("%s got %d progress notifications, want %d", w.name, progress, steps)
		}
		want := map[string]string{"1": fmt.Sprintf("%d steps", steps), "2": "from " + w.name}
		for id, txt := range want {
			if results[id] != txt {
				t.Errorf("%s: result of id %s = %q, want %q", w.name, id, results[id], txt)
			}
		}
	}
}

// TestRandomInterleavings: two windows call one instance concurrently with colliding ids and
// progress tokens, in 200 seeded random rounds; no frame about one window's call reaches the
// other.
func TestRandomInterleavings(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch())
	wins := []*win{attachWin(t, "A", cfg, req), attachWin(t, "B", cfg, req)}
	for _, w := range wins {
		w.initialize()
	}
	rng := rand.New(rand.NewPCG(32, 1))
	for round := range 200 {
		type call struct {
			id    int
			echo  string
			steps int
		}
		plans := make([][]call, len(wins))
		for i, w := range wins {
			for n := range 1 + rng.IntN(4) {
				c := call{id: n + 1} // the same ids in both windows, every round
				if rng.IntN(2) == 0 {
					c.echo = fmt.Sprintf("%s-%d-%d", w.name, round, n)
				} else {
					c.steps = 1 + rng.IntN(4)
				}
				plans[i] = append(plans[i], c)
			}
		}
		var wg sync.WaitGroup
		for i, w := range wins {
			wg.Go(func() {
				for _, c := range plans[i] {
					if c.echo != "" {
						w.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q},"_meta":{"progressToken":1}}}`, c.id, c.echo)
					} else {
						w.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0,"steps":%d},"_meta":{"progressToken":%d}}}`, c.id, c.steps, c.id)
					}
				}
			})
		}
		wg.Wait()
		for i, w := range wins {
			want := map[string]call{}
			progress := map[string]int{}
			byID := map[string]call{}
			for _, c := range plans[i] {
				want[fmt.Sprint(c.id)] = c
				byID[fmt.Sprint(c.id)] = c
			}
			steps := 0
			for _, c := range plans[i] {
				steps += c.steps
			}
			got := 0
			for done := 0; done < len(plans[i]) || got < steps; {
				f := w.next()
				switch f.Method {
				case "notifications/progress":
					var p struct {
						Token json.RawMessage `json:"progressToken"`
						Total int             `json:"total"`
					}
					json.Unmarshal(f.Params, &p)
					c, ok := byID[string(p.Token)]
					if !ok || c.steps != p.Total {
						t.Fatalf("round %d: %s got progress %s that is not about its call", round, w.name, f.raw)
					}
					progress[string(p.Token)]++
					got++
					if progress[string(p.Token)] > c.steps {
						t.Fatalf("round %d: %s got more progress on token %s than its call made", round, w.name, p.Token)
					}
				case "":
					c, ok := want[string(f.ID)]
					if !ok {
						t.Fatalf("round %d: %s got a response to id %s it did not send", round, w.name, f.ID)
					}
					got := text(f)
					if c.echo != "" && got != c.echo || c.echo == "" && got != fmt.Sprintf("%d steps", c.steps) {
						t.Fatalf("round %d: %s got %q for its id %s: another window's result", round, w.name, got, f.ID)
					}
					delete(want, string(f.ID))
					done++
				default:
					if strings.HasPrefix(f.Method, "notifications/") && f.Method != "notifications/message" {
						t.Fatalf("round %d: %s got %s", round, w.name, f.raw)
					}
				}
			}
		}
	}
}
