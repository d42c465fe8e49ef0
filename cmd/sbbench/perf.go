package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// The per-call cost table (issue "Performance"): each ratio is switchboard against a baseline
// measured in the same run, the subjects alternating from run to run.
//
//   - tools: callTool p50 with mcptest carrying cfg.manyTools dummy tools, against the same
//     server without them (its 7 own tools), and against a bare client on the same big server.
//   - everything: the Node reference server (@modelcontextprotocol/server-everything, its echo
//     tool): callTool p50 and the throughput of 8 concurrent callers, against a bare client.
//   - first: time from starting the host process to the first call answered, one mcptest
//     server, against a bare client starting the server, initializing and calling.

// perfRow is one line of the per-call table: a against b.
type perfRow struct {
	name, unit string
	a, b       figure
	aWho, bWho string
	goal       string
	max, min   float64 // a/b must be <= max (when > 0) and >= min (when > 0)
}

// perfSubject is one side of a perfRow: it measures one run.
type perfSubject func() (float64, error)

// measurePair runs both subjects cfg.runs times, alternating who goes first.
func (b *bench) measurePair(what string, sa, sb perfSubject) (figure, figure) {
	var vals [2][]float64
	var t [2]tally
	subj := [2]perfSubject{sa, sb}
	for run := range b.cfg.runs {
		for k := range 2 {
			i := (run + k) % 2
			if t[i].giveUp(len(vals[i])) {
				continue
			}
			v, err := subj[i]()
			if t[i].record(err) {
				vals[i] = append(vals[i], v)
			}
			b.logf("%s run %d side %d: %.1f %v", what, run, i, v, err)
		}
	}
	return figOf(vals[0], t[0]), figOf(vals[1], t[1])
}

func (b *bench) perfRows() []perfRow {
	var rows []perfRow
	if b.cfg.only["tools"] {
		rows = append(rows, b.toolCountRows()...)
	}
	if b.cfg.only["everything"] && b.cfg.everything != "" {
		rows = append(rows, b.everythingRows()...)
	}
	if b.cfg.only["first"] {
		sb, base := b.measurePair("first call", b.firstCallSB, b.firstCallBase)
		rows = append(rows, perfRow{name: "first call answered after process start, 1 server (mcptest)", unit: "ms",
			a: sb, b: base, aWho: "switchboard", bWho: "bare mcp-go", goal: "≤ 1.5x", max: 1.5})
	}
	return rows
}

func (b *bench) mcptestSpec(args ...string) serverSpec {
	return serverSpec{Command: b.cfg.mcptest, Args: args}
}

func (b *bench) toolCountRows() []perfRow {
	many := fmt.Sprint(b.cfg.manyTools)
	big, small := b.mcptestSpec("--tools", many), b.mcptestSpec()
	// Three subjects, one rotation: switchboard with the big server, with the small one, and a
	// bare client with the big one.
	var vals [3][]float64
	var t [3]tally
	subj := [3]perfSubject{
		func() (float64, error) { return b.rtSBSpec(big, echoTool, echoArgs, "") },
		func() (float64, error) { return b.rtSBSpec(small, echoTool, echoArgs, "") },
		func() (float64, error) { return b.rtBaseSpec(big, echoTool, echoArgs, "") },
	}
	for run := range b.cfg.runs {
		for k := range 3 {
			i := (run + k) % 3
			if t[i].giveUp(len(vals[i])) {
				continue
			}
			v, err := subj[i]()
			if t[i].record(err) {
				vals[i] = append(vals[i], v)
			}
			b.logf("tool count run %d subject %d: %.0f µs %v", run, i, v, err)
		}
	}
	sbBig, sbSmall, baseBig := figOf(vals[0], t[0]), figOf(vals[1], t[1]), figOf(vals[2], t[2])
	return []perfRow{
		{name: "callTool p50, server with " + many + " tools vs the same server with its 7", unit: "µs",
			a: sbBig, b: sbSmall, aWho: "switchboard, " + many + " tools", bWho: "switchboard, 7 tools", goal: "≤ 1.1x", max: 1.1},
		{name: "callTool p50, server with " + many + " tools", unit: "µs",
			a: sbBig, b: baseBig, aWho: "switchboard", bWho: "bare mcp-go", goal: "≤ 1.3x", max: 1.3},
	}
}

func everythingArgs(text string) map[string]any { return map[string]any{"message": text} }

func (b *bench) everythingRows() []perfRow {
	spec := serverSpec{Command: b.cfg.node, Args: []string{b.cfg.everything, "stdio"}}
	sb, base := b.measurePair("everything round trip",
		func() (float64, error) { return b.rtSBSpec(spec, echoTool, everythingArgs, "Echo: ") },
		func() (float64, error) { return b.rtBaseSpec(spec, echoTool, everythingArgs, "Echo: ") })
	sbT, baseT := b.measurePair("everything throughput",
		func() (float64, error) { return b.tputSB(spec, 8) },
		func() (float64, error) { return b.tputBase(spec, 8) })
	return []perfRow{
		{name: "callTool p50, server-everything (Node) echo", unit: "µs", a: sb, b: base,
			aWho: "switchboard", bWho: "bare mcp-go", goal: "≤ 1.5x", max: 1.5},
		{name: "throughput, 8 concurrent callers, server-everything echo", unit: "calls/s", a: sbT, b: baseT,
			aWho: "switchboard", bWho: "bare mcp-go", goal: "≥ 0.8x", min: 0.8},
	}
}

// rtSBSpec is the median callTool round trip through switchboard with one server.
func (b *bench) rtSBSpec(spec serverSpec, tool string, args func(string) map[string]any, prefix string) (float64, error) {
	c, _, err := b.startSBWith(map[string]serverSpec{serverName(0): spec}, nil)
	if err != nil {
		return 0, err
	}
	defer b.stopSB(c)
	return b.timeCalls(func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		res, err := b.sbCall(ctx, c, serverName(0), tool, args(want))
		if err != nil {
			return err
		}
		return checkEcho(res.Text, prefix+want)
	})
}

// rtBaseSpec is the median call round trip of a bare mcp-go client.
func (b *bench) rtBaseSpec(spec serverSpec, tool string, args func(string) map[string]any, prefix string) (float64, error) {
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	c, err := dialBare(ctx, spec, b.home("bare"))
	if err != nil {
		return 0, err
	}
	defer c.close()
	return b.timeCalls(func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		got, err := c.call(ctx, tool, args(want))
		if err != nil {
			return err
		}
		return checkEcho(got, prefix+want)
	})
}

// throughput runs cfg.calls calls (after the warmup) spread over callers goroutines and returns
// calls per second.
func (b *bench) throughput(callers int, call func(ctx context.Context, i int) error) (float64, error) {
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	for i := range b.cfg.warmup {
		if err := call(ctx, -1-i); err != nil {
			return 0, err
		}
	}
	var next sync.Mutex
	n := 0
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	t0 := time.Now()
	for range callers {
		wg.Go(func() {
			for {
				next.Lock()
				i := n
				n++
				next.Unlock()
				if i >= b.cfg.calls {
					return
				}
				if err := call(ctx, i); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(t0)
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(b.cfg.calls) / d.Seconds(), nil
}

func (b *bench) tputSB(spec serverSpec, callers int) (float64, error) {
	c, _, err := b.startSBWith(map[string]serverSpec{serverName(0): spec}, nil)
	if err != nil {
		return 0, err
	}
	defer b.stopSB(c)
	return b.throughput(callers, func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		res, err := b.sbCall(ctx, c, serverName(0), echoTool, everythingArgs(want))
		if err != nil {
			return err
		}
		return checkEcho(res.Text, "Echo: "+want)
	})
}

func (b *bench) tputBase(spec serverSpec, callers int) (float64, error) {
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	c, err := dialBare(ctx, spec, b.home("bare"))
	if err != nil {
		return 0, err
	}
	defer c.close()
	return b.throughput(callers, func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		got, err := c.call(ctx, echoTool, everythingArgs(want))
		if err != nil {
			return err
		}
		return checkEcho(got, "Echo: "+want)
	})
}

// firstCallSB starts switchboard with one server and calls echo as soon as it can: right after
// initialized, and again on every serversChanged until the call is answered.
func (b *bench) firstCallSB() (float64, error) {
	home := b.home("sb")
	changed := make(chan struct{}, 1)
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	t0 := time.Now()
	c, err := startSwitchboard(b.cfg.switchboard, home, func(method string, _ json.RawMessage) {
		if method == "switchboard/serversChanged" {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return 0, err
	}
	defer b.stopSB(c)
	spec := b.mcptestSpec()
	servers := map[string]any{serverName(0): map[string]any{"command": spec.Command, "args": spec.Args}}
	if err := c.initialize(ctx, map[string]any{"servers": servers}); err != nil {
		return 0, fmt.Errorf("initialize: %w", err)
	}
	for {
		res, err := b.sbCall(ctx, c, serverName(0), echoTool, echoArgs("first"))
		if err == nil {
			if err := checkEcho(res.Text, "first"); err != nil {
				return 0, err
			}
			return ms(time.Since(t0)), nil
		}
		if !strings.Contains(err.Error(), "Unknown tool") {
			return 0, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, fmt.Errorf("switchboard: no answer to the first call: %w", ctx.Err())
		}
	}
}

// firstCallBase starts the server under a bare client (initialize, tools/list) and calls echo.
func (b *bench) firstCallBase() (float64, error) {
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	t0 := time.Now()
	c, err := dialBare(ctx, b.mcptestSpec(), b.home("bare"))
	if err != nil {
		return 0, err
	}
	defer c.close()
	got, err := c.call(ctx, echoTool, echoArgs("first"))
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	return ms(d), checkEcho(got, "first")
}

func printPerfTable(w io.Writer, rows []perfRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| per-call measurement | switchboard | baseline | ratio | goal |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	for _, r := range rows {
		goal := r.goal
		if r.a.ok && r.b.ok && r.b.v > 0 {
			x := r.a.v / r.b.v
			met := (r.max <= 0 || x <= r.max) && (r.min <= 0 || x >= r.min)
			if met {
				goal += fmt.Sprintf(" — met (%.2fx)", x)
			} else {
				goal += fmt.Sprintf(" — NOT met (%.2fx)", x)
			}
		}
		fmt.Fprintf(w, "| %s | %s (%s) | %s (%s) | %s | %s |\n", r.name, fmtFig(r.a, r.unit), r.aWho, fmtFig(r.b, r.unit), r.bWho, ratio(r.a, r.b), goal)
	}
	for _, r := range rows {
		for _, f := range []struct {
			who string
			f   figure
		}{{r.aWho, r.a}, {r.bWho, r.b}} {
			if f.f.err != "" {
				fmt.Fprintf(w, "- %s, %s: %d run(s) failed: %s\n", r.name, f.who, f.f.fails, f.f.err)
			}
		}
	}
}
