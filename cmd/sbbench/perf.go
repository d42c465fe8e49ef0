package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The per-call cost table (issue "Performance"): each ratio is switchboard against a baseline
// measured in the same run. The round-trip and throughput subjects run side by side, their calls
// interleaved (interleavedP50, interleavedThroughput); the first-call subjects alternate.
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

// measurePair runs both subjects runs times, alternating who goes first.
func (b *bench) measurePair(what string, runs int, sa, sb perfSubject) (figure, figure) {
	var vals [2][]float64
	var t [2]tally
	subj := [2]perfSubject{sa, sb}
	for run := range runs {
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
	if b.cfg.only["shared"] {
		rows = append(rows, b.sharedRows()...)
	}
	if b.cfg.only["first"] {
		// Issue 35: the median of at least 11 runs (a start is ~20 ms, and its spread is wide).
		runs := max(b.cfg.runs, firstCallRuns)
		if b.cfg.compare == "" {
			sb, base := b.measurePair("first call", runs, b.firstCallSB, b.firstCallBase)
			rows = append(rows, perfRow{name: "first call answered after process start, 1 server (mcptest)", unit: "ms",
				a: sb, b: base, aWho: "switchboard", bWho: "bare mcp-go", goal: "≤ 1.5x", max: 1.5},
				perfRow{name: "host CPU from its start to the first call answered", unit: "ms",
					a: figOf(b.firstCPU[b.cfg.switchboard], tally{}), aWho: "switchboard", bWho: "no host process"})
		} else {
			// A change to the start measured against the binary before it: the three subjects
			// take turns, each run in another order.
			figs := b.measureRotating("first call", runs, []perfSubject{
				func() (float64, error) { return b.firstCallOf(b.cfg.switchboard) },
				b.firstCallBase,
				func() (float64, error) { return b.firstCallOf(b.cfg.compare) },
			})
			rows = append(rows,
				perfRow{name: "first call answered after process start, 1 server (mcptest)", unit: "ms",
					a: figs[0], b: figs[1], aWho: "switchboard", bWho: "bare mcp-go", goal: "≤ 1.5x", max: 1.5},
				perfRow{name: "--compare: first call answered after process start", unit: "ms",
					a: figs[2], b: figs[0], aWho: "--compare binary", bWho: "switchboard"},
				perfRow{name: "--compare: host CPU from its start to the first call answered", unit: "ms",
					a: figOf(b.firstCPU[b.cfg.compare], tally{}), b: figOf(b.firstCPU[b.cfg.switchboard], tally{}),
					aWho: "--compare binary", bWho: "switchboard"})
		}
	}
	return rows
}

// measureRotating runs every subject runs times, the order rotated from run to run.
func (b *bench) measureRotating(what string, runs int, subj []perfSubject) []figure {
	vals := make([][]float64, len(subj))
	t := make([]tally, len(subj))
	for run := range runs {
		for k := range subj {
			i := (run + k) % len(subj)
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
	figs := make([]figure, len(subj))
	for i := range subj {
		figs[i] = figOf(vals[i], t[i])
	}
	return figs
}

// firstCallRuns is the fewest runs of the first-call row (issue 35: its goal is on the median of 11).
const firstCallRuns = 11

func (b *bench) mcptestSpec(args ...string) serverSpec {
	return serverSpec{Command: b.cfg.mcptest, Args: args}
}

func (b *bench) toolCountRows() []perfRow {
	many := fmt.Sprint(b.cfg.manyTools)
	big, small := b.mcptestSpec("--tools", many), b.mcptestSpec()
	// Three subjects, their calls interleaved: switchboard with the big server, with the small
	// one, and a bare client with the big one.
	figs, _ := b.interleavedP50("tool count", b.cfg.warmup, b.cfg.calls, []caller{
		b.sbCaller(big, echoArgs, ""), b.sbCaller(small, echoArgs, ""), b.bareCaller(big, echoArgs, ""),
	})
	sbBig, sbSmall, baseBig := figs[0], figs[1], figs[2]
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
	subjects := []caller{b.sbCaller(spec, everythingArgs, "Echo: "), b.bareCaller(spec, everythingArgs, "Echo: "),
		b.relayCaller(spec, everythingArgs, "Echo: "), b.translatorCaller(spec, everythingArgs, "Echo: ")}
	if b.cfg.compare != "" {
		subjects = append(subjects, b.sbCallerOf(b.cfg.compare, spec, everythingArgs, "Echo: "))
	}
	// Node compiles the server's code as it runs: the first thousand or so calls are slower, and
	// the bare client's figures only settle after them (at the 0.10 ms and 19,080 calls/s).
	// Each subject warms its own node up the same way.
	warm := b.cfg.warmup + b.cfg.warmServer
	p50, use := b.interleavedP50("everything round trip", warm, b.cfg.serverCalls, subjects)
	tput, load := b.interleavedThroughput("everything throughput", 8, warm, subjects)
	var compared []perfRow
	if b.cfg.compare != "" {
		// A change measured against the binary before it: a fifth subject, interleaved with the
		// others, so both binaries meet the same stretches of the machine.
		const c, s = "--compare binary", "switchboard"
		compared = []perfRow{
			{name: "--compare: callTool p50, server-everything echo", unit: "µs", a: p50[4], b: p50[0], aWho: c, bWho: s},
			{name: "--compare: throughput, 8 concurrent callers, server-everything echo", unit: "calls/s", a: tput[4], b: tput[0], aWho: c, bWho: s},
			{name: "--compare: host CPU per call, server-everything echo", unit: "µs", a: use[4].hostCPU, b: use[0].hostCPU, aWho: c, bWho: s},
			{name: "--compare: 8 callers: host CPU per call, server-everything echo", unit: "µs", a: load[4].hostCPU, b: load[0].hostCPU, aWho: c, bWho: s},
			{name: "--compare: host context switches per call, server-everything echo", unit: "switches", a: use[4].hostSwitches, b: use[0].hostSwitches, aWho: c, bWho: s},
			{name: "--compare: server CPU per call, server-everything echo (node process)", unit: "µs", a: use[4].serverCPU, b: use[0].serverCPU, aWho: "behind " + c, bWho: "behind " + s},
		}
	}
	return append([]perfRow{
		// The goals (issue 35) are set against the floor under any LSP host, measured in the same
		// runs: the minimal translator below.
		{name: "callTool p50, server-everything echo, against the minimal LSP translator", unit: "µs", a: p50[0], b: p50[3],
			aWho: "switchboard", bWho: "translator", goal: "≤ 1.2x", max: 1.2},
		{name: "throughput, 8 concurrent callers, server-everything echo, against the minimal LSP translator", unit: "calls/s", a: tput[0], b: tput[3],
			aWho: "switchboard", bWho: "translator", goal: "≥ 0.85x", min: 0.85},
		{name: "8 callers: host CPU per call, server-everything echo, against the minimal LSP translator", unit: "µs", a: load[0].hostCPU, b: load[3].hostCPU,
			aWho: "switchboard", bWho: "translator", goal: "≤ 2x", max: 2},
		{name: "callTool p50, server-everything (Node) echo", unit: "µs", a: p50[0], b: p50[1],
			aWho: "switchboard", bWho: "bare mcp-go"},
		{name: "throughput, 8 concurrent callers, server-everything echo", unit: "calls/s", a: tput[0], b: tput[1],
			aWho: "switchboard", bWho: "bare mcp-go"},
		// The floor under any host in a process of its own: the bare client through a byte relay
		// (one more process, a pipe hop each way, no work), interleaved with the two above.
		{name: "callTool p50, server-everything echo, through a byte relay (no host)", unit: "µs", a: p50[2], b: p50[1],
			aWho: "bare mcp-go via relay", bWho: "bare mcp-go"},
		{name: "throughput, 8 concurrent callers, server-everything echo, through a byte relay", unit: "calls/s", a: tput[2], b: tput[1],
			aWho: "bare mcp-go via relay", bWho: "bare mcp-go"},
		// The floor under any LSP host in a process of its own: the LSP driver through the least
		// translation switchboard.callTool needs (no gate, no audit, no checks).
		{name: "callTool p50, server-everything echo, through a minimal LSP translator (no host)", unit: "µs", a: p50[3], b: p50[1],
			aWho: "LSP driver via translator", bWho: "bare mcp-go"},
		{name: "throughput, 8 concurrent callers, server-everything echo, through a minimal LSP translator", unit: "calls/s", a: tput[3], b: tput[1],
			aWho: "LSP driver via translator", bWho: "bare mcp-go"},
		// Where the time goes (no goal): what the processes use per call during the p50 runs.
		{name: "server CPU per call, server-everything echo (node process)", unit: "µs", a: use[0].serverCPU, b: use[1].serverCPU,
			aWho: "behind switchboard", bWho: "behind bare mcp-go"},
		{name: "switchboard host CPU per call, server-everything echo", unit: "µs", a: use[0].hostCPU,
			aWho: "switchboard", bWho: "no host process"},
		{name: "switchboard host context switches per call, server-everything echo", unit: "switches", a: use[0].hostSwitches,
			aWho: "switchboard", bWho: "no host process"},
		{name: "server CPU per call, server-everything echo, behind a byte relay (node process)", unit: "µs", a: use[2].serverCPU, b: use[1].serverCPU,
			aWho: "behind the relay", bWho: "behind bare mcp-go"},
		{name: "server CPU per call, server-everything echo, behind the minimal LSP translator (node process)", unit: "µs", a: use[3].serverCPU, b: use[1].serverCPU,
			aWho: "behind the translator", bWho: "behind bare mcp-go"},
		{name: "byte relay CPU per call, server-everything echo", unit: "µs", a: use[2].hostCPU,
			aWho: "relay", bWho: "no host process"},
		// The same under the 8 callers' load (the throughput bursts): what the goal's CPU budget
		// is spent on when the 2 cores are full.
		{name: "8 callers: switchboard host CPU per call, server-everything echo", unit: "µs", a: load[0].hostCPU,
			aWho: "switchboard", bWho: "no host process"},
		{name: "8 callers: server CPU per call, server-everything echo (node process)", unit: "µs", a: load[0].serverCPU, b: load[1].serverCPU,
			aWho: "behind switchboard", bWho: "behind bare mcp-go"},
		{name: "8 callers: client CPU per call, server-everything echo (sbbench's process)", unit: "µs", a: load[0].clientCPU, b: load[1].clientCPU,
			aWho: "LSP driver", bWho: "bare mcp-go client"},
		{name: "8 callers: client CPU per call, through a byte relay (sbbench's process)", unit: "µs", a: load[2].clientCPU, b: load[1].clientCPU,
			aWho: "bare mcp-go via relay", bWho: "bare mcp-go client"},
		{name: "minimal LSP translator CPU per call, server-everything echo", unit: "µs", a: use[3].hostCPU,
			aWho: "translator", bWho: "no host process"},
		{name: "8 callers: minimal LSP translator CPU per call, server-everything echo", unit: "µs", a: load[3].hostCPU,
			aWho: "translator", bWho: "no host process"},
		{name: "8 callers: server CPU per call, behind the minimal LSP translator (node process)", unit: "µs", a: load[3].serverCPU, b: load[1].serverCPU,
			aWho: "behind the translator", bWho: "behind bare mcp-go"},
		{name: "8 callers: client CPU per call, through the minimal LSP translator (sbbench's process)", unit: "µs", a: load[3].clientCPU, b: load[1].clientCPU,
			aWho: "LSP driver via translator", bWho: "bare mcp-go client"},
	}, compared...)
}

// caller is one subject of an interleaved measurement: it starts the subject (a host with its
// server, or a bare client with its server).
type caller func() (*running, error)

// running is a started subject: its echo call, how to stop it, and the processes to watch.
type running struct {
	call   func(ctx context.Context, i int) error
	stop   func()
	host   int // the host's pid (0: no host process, the bare client runs in sbbench)
	server int // the MCP server's pid (0: not known)
}

// sbCaller is switchboard with spec as its one server.
func (b *bench) sbCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return b.sbCallerOf(b.cfg.switchboard, spec, args, prefix)
}

// sbCallerOf is sbCaller of the switchboard binary bin.
func (b *bench) sbCallerOf(bin string, spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		c, _, err := b.startSBWith(bin, map[string]serverSpec{serverName(0): spec}, nil)
		if err != nil {
			return nil, err
		}
		r := &running{host: c.pid(), stop: func() { b.stopSB(c) }}
		if tree := descendants(c.pid()); len(tree) > 1 {
			r.server = tree[1]
		}
		r.call = b.lspEcho(c, args, prefix)
		return r, nil
	}
}

// lspEcho is the echo call through the language server c (switchboard.callTool).
func (b *bench) lspEcho(c *lspClient, args func(string) map[string]any, prefix string) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		res, err := b.sbCall(ctx, c, serverName(0), echoTool, args(want))
		if err != nil {
			return err
		}
		return checkEcho(res.Text, prefix+want)
	}
}

// bareCaller is a bare mcp-go client of spec.
func (b *bench) bareCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		ctx, cancel := withTimeout(60 * time.Second)
		defer cancel()
		c, err := dialBare(ctx, spec, b.home("bare"))
		if err != nil {
			return nil, err
		}
		r := &running{stop: c.close}
		if c.cmd != nil && c.cmd.Process != nil {
			r.server = c.cmd.Process.Pid
		}
		r.call = func(ctx context.Context, i int) error {
			want := fmt.Sprintf("ping-%d", i)
			got, err := c.call(ctx, echoTool, args(want))
			if err != nil {
				return err
			}
			return checkEcho(got, prefix+want)
		}
		return r, nil
	}
}

// relayCaller is a bare mcp-go client of spec through `sbbench _relay` (childRelay): its host
// figures are the relay's.
func (b *bench) relayCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		relayed, err := relayedSpec(spec)
		if err != nil {
			return nil, err
		}
		r, err := b.bareCaller(relayed, args, prefix)()
		if err != nil {
			return nil, err
		}
		r.host, r.server = r.server, 0
		if tree := descendants(r.host); len(tree) > 1 {
			r.server = tree[1]
		}
		return r, nil
	}
}

// relayedSpec is spec run behind `sbbench _relay` (childRelay).
func relayedSpec(spec serverSpec) (serverSpec, error) {
	self, err := os.Executable()
	if err != nil {
		return serverSpec{}, err
	}
	return serverSpec{Command: self, Args: append([]string{"_relay", spec.Command}, spec.Args...)}, nil
}

// translatorCaller is the LSP driver of switchboard's callers through `sbbench _translate`
// (childTranslator) with spec as its server: its host figures are the translator's.
func (b *bench) translatorCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		c, err := startLSP(exec.Command(self, append([]string{"_translate", spec.Command}, spec.Args...)...), b.home("translate"), nil)
		if err != nil {
			return nil, err
		}
		ctx, cancel := withTimeout(60 * time.Second)
		defer cancel()
		if err := c.initialize(ctx, nil); err != nil {
			b.stopSB(c)
			return nil, fmt.Errorf("translator: initialize: %w", err)
		}
		r := &running{host: c.pid(), stop: func() { b.stopSB(c) }}
		if tree := descendants(c.pid()); len(tree) > 1 {
			r.server = tree[1]
		}
		r.call = b.lspEcho(c, args, prefix)
		return r, nil
	}
}

// openAll starts every subject for one run, side by side, and lets them settle (memSettle, as
// for the memory rows: a host in an editor has long finished its start when a call comes, and
// the host retunes itself once its start is over, host.Options.Settled). A subject that failed
// to start is nil (its error is recorded in its tally). The returned stop ends them all.
func openAll(subjects []caller, t []tally) (runs []*running, stop func()) {
	runs = make([]*running, len(subjects))
	errs := make([]error, len(subjects))
	var wg sync.WaitGroup
	for i, open := range subjects {
		if t[i].giveUp(0) {
			continue
		}
		wg.Go(func() { runs[i], errs[i] = open() })
	}
	wg.Wait()
	for i := range subjects {
		if runs[i] == nil && errs[i] == nil {
			continue // given up
		}
		if !t[i].record(errs[i]) {
			runs[i] = nil
		}
	}
	settle()
	return runs, func() {
		for _, r := range runs {
			if r != nil {
				r.stop()
			}
		}
	}
}

// usage is what interleavedP50 saw the subjects' processes use per timed call.
type usage struct {
	hostCPU, hostSwitches, serverCPU figure // µs, count, µs per call; each the median of runs
	// clientCPU is this process's own CPU per call during the 8 callers' bursts: the LSP driver
	// (an editor's stand-in) or the bare client, whichever is the subject (bursts run one at a time).
	clientCPU figure
}

// interleaveBlock is how many back-to-back calls a subject makes before the next one takes its
// turn: few enough that the subjects share the machine's moments of load, enough that a call
// follows a call (as in a tight loop) rather than another subject's idle time.
const interleaveBlock = 10

// interleavedP50 measures the subjects' median call round trip. Every run starts all of them
// (fresh processes), warms each up with warm calls, then times calls calls of each, interleaved in blocks of
// interleaveBlock calls (in a fresh order each round), so every subject sees the same stretches of a busy
// machine. A run's figure is the median of its calls; a subject's figure is the median of its
// runs.
func (b *bench) interleavedP50(what string, warm, calls int, subjects []caller) ([]figure, []usage) {
	n := len(subjects)
	vals := make([][]float64, n)
	hostCPU, hostSw, serverCPU := make([][]float64, n), make([][]float64, n), make([][]float64, n)
	t := make([]tally, n)
	for run := range b.cfg.runs {
		subj, stop := openAll(subjects, t)
		ctx, cancel := withTimeout(5 * time.Minute)
		samples := make([][]float64, n)
		failed := make([]bool, n)
		do := func(s, i int) bool {
			if subj[s] == nil || failed[s] {
				return false
			}
			if err := subj[s].call(ctx, i); err != nil {
				t[s].record(err)
				failed[s] = true
				return false
			}
			return true
		}
		for i := range warm {
			for s := range n {
				do(s, -1-i)
			}
		}
		// What each subject's host and server use during the timed calls (they idle while the
		// other subjects take their turns).
		hostAt, serverAt := make([]cpuUse, n), make([]cpuUse, n)
		for s, r := range subj {
			if r != nil {
				hostAt[s], _ = processCPU(r.host)
				serverAt[s], _ = processCPU(r.server)
			}
		}
		// Each round of blocks goes through the subjects in an order of its own: which subject
		// follows which changes, so none always meets the machine right after the same other one
		// (a fixed rotation gave the first subject a steady 2-4% on the p50 against an identical
		// binary in the fourth place).
		order := rand.New(rand.NewPCG(uint64(run), 0x5b))
		for start := 0; start < calls; start += interleaveBlock {
			end := min(start+interleaveBlock, calls)
			perm := order.Perm(n)
			for k := range n {
				s := perm[k]
				for i := start; i < end; i++ {
					t0 := time.Now()
					if do(s, i) {
						samples[s] = append(samples[s], float64(time.Since(t0).Nanoseconds())/1e3)
					}
				}
			}
		}
		for s, r := range subj {
			if r == nil || failed[s] {
				continue
			}
			timed := float64(len(samples[s]))
			if h, ok := processCPU(r.host); ok && r.host > 0 {
				hostCPU[s] = append(hostCPU[s], float64(h.ns-hostAt[s].ns)/1e3/timed)
				hostSw[s] = append(hostSw[s], float64(h.switches-hostAt[s].switches)/timed)
			}
			if v, ok := processCPU(r.server); ok && r.server > 0 {
				serverCPU[s] = append(serverCPU[s], float64(v.ns-serverAt[s].ns)/1e3/timed)
			}
		}
		cancel()
		stop()
		b.keepRun(vals, subj, failed, samples, "%s run %d subject %d: %.1f µs", what, run)
	}
	figs, use := make([]figure, n), make([]usage, n)
	for s := range n {
		figs[s] = figOf(vals[s], t[s])
		use[s] = usage{hostCPU: fig(hostCPU[s]), hostSwitches: fig(hostSw[s]), serverCPU: fig(serverCPU[s])}
	}
	return figs, use
}

// keepRun adds each subject's run figure (the median of its samples in this run) to vals, for the
// subjects that started and did not fail, and logs it with format (what, run, subject, figure).
func (b *bench) keepRun(vals [][]float64, subj []*running, failed []bool, samples [][]float64, format, what string, run int) {
	for s := range vals {
		if subj[s] != nil && !failed[s] {
			v := fig(samples[s]).v
			vals[s] = append(vals[s], v)
			b.logf(format, what, run, s, v)
		}
	}
}

// interleavedThroughput measures the subjects' throughput with callers concurrent callers. Every
// run starts all of them, then takes turns: each subject in turn runs a burst of cfg.burst calls
// (after its warm-up), four bursts each, in a fresh order each time; the subject's run figure is its
// median burst, so a subject is measured through the same stretch of the machine's load as the
// others.
//
// The usage returned is the host's and the server's CPU per call during the timed bursts (no
// context switches: under load they count batching, not wake-ups).
func (b *bench) interleavedThroughput(what string, callers, warm int, subjects []caller) ([]figure, []usage) {
	const bursts = 4
	n := len(subjects)
	vals := make([][]float64, n)
	hostCPU, serverCPU, clientCPU := make([][]float64, n), make([][]float64, n), make([][]float64, n)
	t := make([]tally, n)
	self := os.Getpid()
	for run := range b.cfg.runs {
		subj, stop := openAll(subjects, t)
		rates := make([][]float64, n)
		failed := make([]bool, n)
		hostNs, serverNs, clientNs := make([]int64, n), make([]int64, n), make([]int64, n) // summed over the timed bursts
		order := rand.New(rand.NewPCG(uint64(run), 0x7c))
		for burst := range bursts {
			perm := order.Perm(n)
			for k := range n {
				s := perm[k]
				if subj[s] == nil || failed[s] {
					continue
				}
				r := subj[s]
				if burst == 0 { // warm up outside the CPU figures
					if err := warmUp(warm, r.call); err != nil {
						t[s].record(err)
						failed[s] = true
						continue
					}
				}
				h0, _ := processCPU(r.host)
				s0, _ := processCPU(r.server)
				c0, _ := processCPU(self)
				v, err := b.throughput(callers, r.call)
				if err != nil {
					t[s].record(err)
					failed[s] = true
					continue
				}
				c1, _ := processCPU(self)
				h1, _ := processCPU(r.host)
				s1, _ := processCPU(r.server)
				clientNs[s] += c1.ns - c0.ns
				hostNs[s] += h1.ns - h0.ns
				serverNs[s] += s1.ns - s0.ns
				rates[s] = append(rates[s], v)
			}
		}
		stop()
		for s, r := range subj {
			if r == nil || failed[s] {
				continue
			}
			calls := float64(bursts * b.cfg.burst)
			if r.host > 0 {
				hostCPU[s] = append(hostCPU[s], float64(hostNs[s])/1e3/calls)
			}
			if r.server > 0 {
				serverCPU[s] = append(serverCPU[s], float64(serverNs[s])/1e3/calls)
			}
			clientCPU[s] = append(clientCPU[s], float64(clientNs[s])/1e3/calls)
		}
		b.keepRun(vals, subj, failed, rates, "%s run %d subject %d: %.0f calls/s", what, run)
	}
	figs, use := make([]figure, n), make([]usage, n)
	for s := range n {
		figs[s] = figOf(vals[s], t[s])
		use[s] = usage{hostCPU: fig(hostCPU[s]), serverCPU: fig(serverCPU[s]), clientCPU: fig(clientCPU[s])}
	}
	return figs, use
}

// warmUp makes n untimed calls, one after another.
func warmUp(n int, call func(ctx context.Context, i int) error) error {
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	for i := range n {
		if err := call(ctx, -1-i); err != nil {
			return err
		}
	}
	return nil
}

// throughput runs cfg.burst calls spread over callers goroutines and returns calls per second.
func (b *bench) throughput(callers int, call func(ctx context.Context, i int) error) (float64, error) {
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
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
				if i >= b.cfg.burst {
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
	return float64(b.cfg.burst) / d.Seconds(), nil
}

// firstCallSB starts switchboard with one server and calls echo as soon as it can: right after
// initialized, and again on every serversChanged until the call is answered.
func (b *bench) firstCallSB() (float64, error) { return b.firstCallOf(b.cfg.switchboard) }

// firstCallOf is firstCallSB with the switchboard binary bin.
func (b *bench) firstCallOf(bin string) (float64, error) {
	home := b.home("sb")
	changed := make(chan struct{}, 1)
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	t0 := time.Now()
	c, err := startSwitchboard(bin, home, b.cfg.profiles, func(method string, _ json.RawMessage) {
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
			d := ms(time.Since(t0))
			if err := checkEcho(res.Text, "first"); err != nil {
				return 0, err
			}
			// What the host's start cost in CPU: unlike the wall time, it does not depend on
			// what else the machine runs meanwhile.
			if u, ok := processCPU(c.pid()); ok {
				if b.firstCPU == nil {
					b.firstCPU = map[string][]float64{}
				}
				b.firstCPU[bin] = append(b.firstCPU[bin], float64(u.ns)/1e6)
			}
			return d, nil
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
		if goal == "" {
			goal = "— (where the time goes)"
		} else if r.a.ok && r.b.ok && r.b.v > 0 {
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
