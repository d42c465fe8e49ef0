package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

type bench struct {
	cfg   config
	log   io.Writer
	homes atomic.Int64 // homes made so far (subjects start side by side: openAll)
	leaks []string     // processes left behind by a host after it was shut down
	// firstCPU is, per switchboard binary, the host's CPU time (ms) from its start to its first
	// call answered, one figure per first-call run (firstCallOf).
	firstCPU map[string][]float64
}

func (b *bench) logf(format string, args ...any) {
	if b.cfg.verbose {
		fmt.Fprintf(b.log, "sbbench: "+format+"\n", args...)
	}
}

// home returns a fresh XDG home for one subject run.
func (b *bench) home(kind string) string {
	d := filepath.Join(b.cfg.work, fmt.Sprintf("%s-%03d", kind, b.homes.Add(1)))
	_ = os.MkdirAll(d, 0o755) // ignore error: best effort
	return d
}

func (b *bench) spec() serverSpec { return serverSpec{Command: b.cfg.mcptest} }

func (b *bench) specs(n int) []serverSpec {
	out := make([]serverSpec, n)
	for i := range out {
		out[i] = b.spec()
	}
	return out
}

func serverName(i int) string { return fmt.Sprintf("s%02d", i) }

func (b *bench) serverMap(n int) map[string]serverSpec {
	m := map[string]serverSpec{}
	for i := range n {
		m[serverName(i)] = b.spec()
	}
	return m
}

// subjects, in an order rotated per run so that no subject always runs first on a warm cache.
type subject int

const (
	subjSB subject = iota
	subjBase
	subjHub
)

func (b *bench) order(run int) []subject {
	all := []subject{subjSB, subjBase, subjHub}
	if b.cfg.hubJS == "" {
		all = all[:2]
	}
	k := run % len(all)
	return append(all[k:], all[:k]...)
}

func (b *bench) all() ([]row, error) {
	var rows []row
	var errs []error
	if b.cfg.only["rt"] {
		rows = append(rows, b.roundTrip())
	}
	if b.cfg.only["ready"] || b.cfg.only["mem"] {
		rs := b.readyAndMemory()
		rows = append(rows, rs...)
	}
	if b.cfg.only["big"] {
		for _, size := range b.cfg.bigSizes {
			rows = append(rows, b.big(size)...)
		}
	}
	if len(b.leaks) > 0 {
		errs = append(errs, fmt.Errorf("processes left behind after shutdown (killed by sbbench): %s", strings.Join(b.leaks, "; ")))
	}
	// Exit status: any switchboard failure, or a figure with no working run at all. A failed
	// run of a peer is reported in the table notes only.
	for _, r := range rows {
		for i, f := range []figure{r.sb, r.base, r.hub} {
			if f.err != "" && (i == 0 || !f.ok) {
				errs = append(errs, fmt.Errorf("%s: %s", r.name, f.err))
			}
		}
	}
	return rows, errors.Join(errs...)
}

// ---- switchboard -------------------------------------------------------------------------

// startSB starts switchboard serve with n servers (s00..) in initializationOptions and returns
// once every server is ready, with the time from process start to that moment. Readiness is
// whichever comes first: a switchboard/serversChanged notification with all ready, or a poll of
// switchboard.servers (every cfg.poll).
func (b *bench) startSB(n int) (*lspClient, time.Duration, error) {
	return b.startSBWith(b.cfg.switchboard, b.serverMap(n), nil)
}

// startSBWith is startSB of the binary bin with the given servers; onNote (may be nil) also sees
// every notification.
func (b *bench) startSBWith(bin string, specs map[string]serverSpec, onNote0 func(string, json.RawMessage)) (*lspClient, time.Duration, error) {
	servers := map[string]any{}
	for name, s := range specs {
		servers[name] = map[string]any{"command": s.Command, "args": s.Args}
	}
	return b.startSBIn(bin, b.home("sb"), nil, servers, nil, onNote0)
}

// startSBIn is startSBWith in the XDG home given, with env added to the host's environment,
// servers as initializationOptions.servers entries and more initializationOptions in opts.
func (b *bench) startSBIn(bin, home string, env []string, servers map[string]any, opts map[string]any, onNote0 func(string, json.RawMessage)) (*lspClient, time.Duration, error) {
	n := len(servers)
	ready := make(chan error, 1)
	onNote := func(method string, params json.RawMessage) {
		if onNote0 != nil {
			onNote0(method, params)
		}
		if method != "switchboard/serversChanged" {
			return
		}
		var p struct {
			Servers []serverStatus `json:"servers"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		if done, err := allReady(p.Servers, n); done || err != nil {
			select {
			case ready <- err:
			default:
			}
		}
	}
	initOpts := map[string]any{"servers": servers}
	for k, v := range opts {
		initOpts[k] = v
	}
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	t0 := time.Now()
	c, err := startSwitchboardEnv(bin, home, b.cfg.profiles, env, onNote)
	if err != nil {
		return nil, 0, err
	}
	if err := c.initialize(ctx, initOpts); err != nil {
		b.stopSB(c)
		return nil, 0, fmt.Errorf("initialize: %w", err)
	}
	for {
		var st []serverStatus
		if err := c.executeCommand(ctx, "switchboard.servers", nil, &st); err != nil {
			b.stopSB(c)
			return nil, 0, err
		}
		done, err := allReady(st, n)
		if err == nil && done {
			return c, time.Since(t0), nil
		}
		if err != nil {
			b.stopSB(c)
			return nil, 0, err
		}
		select {
		case err := <-ready:
			d := time.Since(t0)
			if err != nil {
				b.stopSB(c)
				return nil, 0, err
			}
			return c, d, nil
		case <-time.After(b.cfg.poll):
		case <-ctx.Done():
			b.stopSB(c)
			return nil, 0, fmt.Errorf("switchboard: %d servers not ready: %w", n, ctx.Err())
		}
	}
}

func allReady(st []serverStatus, n int) (bool, error) {
	ready := 0
	for _, s := range st {
		switch s.State {
		case "ready":
			ready++
		case "failed":
			return false, fmt.Errorf("switchboard: server %s failed: %s", s.Name, s.Error)
		}
	}
	return ready == n && len(st) == n, nil
}

// stopSB shuts the host down and kills (and records) anything it left behind.
func (b *bench) stopSB(c *lspClient) {
	tree := descendants(c.pid())[1:]
	c.shutdown()
	for _, p := range tree {
		if err := signalPid(p, 0); err == nil {
			if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); err == nil {
				// Still our child's child (re-parented): only count it if it is a server we started.
				if strings.TrimSpace(string(comm)) == filepath.Base(b.cfg.mcptest)[:min(15, len(filepath.Base(b.cfg.mcptest)))] {
					b.leaks = append(b.leaks, fmt.Sprintf("pid %d (%s)", p, strings.TrimSpace(string(comm))))
					_ = signalPid(p, syscall.SIGKILL) // ignore error: best effort
				}
			}
		}
	}
}

func (b *bench) sbCall(ctx context.Context, c *lspClient, server, tool string, args map[string]any) (toolResult, error) {
	var r toolResult
	err := c.executeCommand(ctx, "switchboard.callTool", map[string]any{
		"name": "mcp__" + server + "__" + tool, "arguments": args, "mode": "always-allow",
	}, &r)
	if err == nil && r.IsError {
		err = fmt.Errorf("switchboard: %s: tool error: %s", tool, truncate(r.Text, 300))
	}
	return r, err
}

// ---- round trip ----------------------------------------------------------------------------

// timeCalls runs warmup untimed calls and then calls timed calls; returns the median in µs.
func (b *bench) timeCalls(call func(ctx context.Context, i int) error) (float64, error) {
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	for i := range b.cfg.warmup {
		if err := call(ctx, -1-i); err != nil {
			return 0, err
		}
	}
	samples := make([]float64, 0, b.cfg.calls)
	for i := range b.cfg.calls {
		t0 := time.Now()
		if err := call(ctx, i); err != nil {
			return 0, err
		}
		samples = append(samples, float64(time.Since(t0).Nanoseconds())/1e3)
	}
	return fig(samples).v, nil
}

func checkEcho(got string, want string) error {
	if !strings.Contains(got, want) {
		return fmt.Errorf("echo returned %q, want it to contain %q", truncate(got, 200), want)
	}
	return nil
}

func (b *bench) roundTrip() row {
	r := row{name: "tool-call round trip (echo, 1 server)", unit: "µs", goal: "≤ 0.5x mcp-hub", goalRatio: 0.5,
		note: "editor→switchboard: workspace/executeCommand switchboard.callTool (mode always-allow) over stdio LSP; " +
			"baseline: mcp-go client.CallTool over stdio to the same server; mcp-hub: POST /api/servers/tools over keep-alive HTTP"}
	var vals [3][]float64
	var t [3]tally
	measure := [3]func() (float64, error){subjSB: b.rtSB, subjBase: b.rtBase, subjHub: b.rtHub}
	for run := range b.cfg.runs {
		for _, s := range b.order(run) {
			if t[s].giveUp(len(vals[s])) {
				continue
			}
			v, err := measure[s]()
			if t[s].record(err) {
				vals[s] = append(vals[s], v)
			}
			b.logf("round trip run %d subject %d: %.0f µs %v", run, s, v, err)
		}
	}
	r.sb, r.base, r.hub = figOf(vals[subjSB], t[subjSB]), figOf(vals[subjBase], t[subjBase]), figOf(vals[subjHub], t[subjHub])
	return r
}

// tally counts a subject's failed runs. A figure is the median of the runs that worked; the
// failures are reported next to the table. A subject that failed twice and never worked is given
// up for the rest of that figure.
type tally struct {
	fails int
	first error
}

func (t *tally) record(err error) bool {
	if err == nil {
		return true
	}
	t.fails++
	if t.first == nil {
		t.first = err
	}
	return false
}

func (t *tally) giveUp(successes int) bool { return successes == 0 && t.fails >= 2 }

func figOf(samples []float64, t tally) figure {
	if len(samples) == 0 {
		if t.first == nil {
			return figure{}
		}
		return failed(t.first)
	}
	f := fig(samples)
	if t.fails > 0 {
		f.fails, f.err = t.fails, t.first.Error()
	}
	return f
}

func (b *bench) rtSB() (float64, error) {
	c, _, err := b.startSB(1)
	if err != nil {
		return 0, err
	}
	defer b.stopSB(c)
	return b.timeCalls(func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		res, err := b.sbCall(ctx, c, serverName(0), echoTool, echoArgs(want))
		if err != nil {
			return err
		}
		return checkEcho(res.Text, want)
	})
}

func (b *bench) rtBase() (float64, error) {
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	c, err := dialBare(ctx, b.spec(), b.home("bare"))
	if err != nil {
		return 0, err
	}
	defer c.close()
	return b.timeCalls(func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		got, err := c.call(ctx, echoTool, echoArgs(want))
		if err != nil {
			return err
		}
		return checkEcho(got, want)
	})
}

func (b *bench) rtHub() (float64, error) {
	h, err := startHub(b.cfg.node, b.cfg.hubJS, b.home("hub"), b.serverMap(1))
	if err != nil {
		return 0, err
	}
	defer h.stop()
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	if err := h.waitReady(ctx, 1, b.cfg.poll); err != nil {
		return 0, err
	}
	return b.timeCalls(func(ctx context.Context, i int) error {
		want := fmt.Sprintf("ping-%d", i)
		got, err := h.callTool(ctx, serverName(0), echoTool, echoArgs(want))
		if err != nil {
			return err
		}
		return checkEcho(got, want)
	})
}

// ---- ready time and memory -------------------------------------------------------------------

type memSample struct{ hostKB, anonKB, treeKB int64 }

func (b *bench) readyAndMemory() []row {
	var rows []row
	memN := slices.Max(b.cfg.counts)
	var memSB, memBase, memHub []memSample
	var memT [3]tally
	for _, n := range b.cfg.counts {
		if !b.cfg.only["ready"] && n != memN {
			continue
		}
		withMem := b.cfg.only["mem"] && n == memN
		r := row{name: fmt.Sprintf("time until %d server(s) ready", n), unit: "ms", goal: "≤ 0.5x mcp-hub", goalRatio: 0.5}
		if n == b.cfg.counts[0] {
			r.note = "from process start to every server ready (switchboard: serversChanged or switchboard.servers poll; " +
				"mcp-hub: GET /api/health state ready and all servers connected, polled every " + b.cfg.poll.String() +
				"; baseline: mcp-go connecting the servers in parallel, initialize + tools/list each)"
		}
		var vals [3][]float64
		var t, tm [3]tally
		for run := range b.cfg.runs {
			for _, s := range b.order(run) {
				if t[s].giveUp(len(vals[s])) {
					continue
				}
				var d time.Duration
				var m memSample
				var err error
				switch s {
				case subjSB:
					d, m, err = b.readySB(n, withMem)
					if t[s].record(err) && withMem {
						memSB = append(memSB, m)
					}
				case subjBase:
					d, err = b.readyBase(n)
					t[s].record(err)
					if withMem && !tm[s].giveUp(len(memBase)) {
						var merr error
						m, merr = b.memBase(n)
						if tm[s].record(merr) {
							memBase = append(memBase, m)
						}
					}
				case subjHub:
					d, m, err = b.readyHub(n, withMem)
					if t[s].record(err) && withMem {
						memHub = append(memHub, m)
					}
				}
				if err == nil {
					vals[s] = append(vals[s], ms(d))
				}
				b.logf("ready n=%d run %d subject %d: %v mem %+v err %v", n, run, s, d, m, err)
			}
		}
		if withMem {
			memT[subjSB], memT[subjBase], memT[subjHub] = t[subjSB], tm[subjBase], t[subjHub]
		}
		if b.cfg.only["ready"] {
			r.sb, r.base, r.hub = figOf(vals[subjSB], t[subjSB]), figOf(vals[subjBase], t[subjBase]), figOf(vals[subjHub], t[subjHub])
			rows = append(rows, r)
		}
	}
	if b.cfg.only["mem"] {
		host := func(ms []memSample) []float64 {
			var out []float64
			for _, m := range ms {
				out = append(out, float64(m.hostKB)/1024)
			}
			return out
		}
		anon := func(ms []memSample) []float64 {
			var out []float64
			for _, m := range ms {
				out = append(out, float64(m.anonKB)/1024)
			}
			return out
		}
		tree := func(ms []memSample) []float64 {
			var out []float64
			for _, m := range ms {
				out = append(out, float64(m.treeKB)/1024)
			}
			return out
		}
		rows = append(rows,
			row{name: fmt.Sprintf("host RSS, %d servers connected", memN), unit: "MB", goal: "< 0.25x mcp-hub", goalRatio: 0.25, strict: true,
				sb: figOf(host(memSB), memT[subjSB]), base: figOf(host(memBase), memT[subjBase]), hub: figOf(host(memHub), memT[subjHub]),
				note: "VmRSS of the host process alone (switchboard / node running mcp-hub / a bare mcp-go client process holding the connections), after one echo call per server"},
			row{name: fmt.Sprintf("host RssAnon (private), %d servers connected", memN), unit: "MB",
				sb: figOf(anon(memSB), memT[subjSB]), base: figOf(anon(memBase), memT[subjBase]), hub: figOf(anon(memHub), memT[subjHub]),
				note: "the anonymous part of the host's VmRSS (heap, stacks; without the executable's file-backed pages)"},
			row{name: fmt.Sprintf("process tree RSS, %d servers connected", memN), unit: "MB",
				sb: figOf(tree(memSB), memT[subjSB]), base: figOf(tree(memBase), memT[subjBase]), hub: figOf(tree(memHub), memT[subjHub]),
				note: "sum of VmRSS over the host and all its descendants (the same mcptest servers under each host; shared pages counted once per process)"},
		)
	}
	return rows
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// memSettle is how long every subject idles after its warm-up calls before its memory is read:
// the figure is a settled host's (an editor's host idles for hours), not one caught in the
// middle of its start. switchboard returns its start-up memory a second after its servers have
// started (host.releaseStartDelay); the others get the same time to collect theirs.
const memSettle = 1500 * time.Millisecond

func settle() { time.Sleep(memSettle) }

func (b *bench) readySB(n int, withMem bool) (time.Duration, memSample, error) {
	c, d, err := b.startSB(n)
	if err != nil {
		return 0, memSample{}, err
	}
	defer b.stopSB(c)
	var m memSample
	if withMem {
		ctx, cancel := withTimeout(60 * time.Second)
		defer cancel()
		for i := range n {
			want := "warm-" + serverName(i)
			res, err := b.sbCall(ctx, c, serverName(i), echoTool, echoArgs(want))
			if err == nil {
				err = checkEcho(res.Text, want)
			}
			if err != nil {
				return 0, m, err
			}
		}
		settle()
		m.hostKB = statusKB(c.pid(), "VmRSS")
		m.anonKB = statusKB(c.pid(), "RssAnon")
		m.treeKB, _ = rssTree(c.pid())
	}
	return d, m, nil
}

func (b *bench) readyBase(n int) (time.Duration, error) {
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	t0 := time.Now()
	cs, err := dialBareN(ctx, b.specs(n), b.home("bare"))
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	for _, c := range cs {
		c.close()
	}
	return d, nil
}

// memBase measures a bare mcp-go client holding n connections, in a process of its own.
func (b *bench) memBase(n int) (memSample, error) {
	self, err := os.Executable()
	if err != nil {
		return memSample{}, err
	}
	cmd := exec.Command(self, "_hold", jsonString(b.specs(n)), b.home("bare"))
	cmd.Stderr = b.log
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return memSample{}, err
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }() // ignore error: best effort
	line, err := readLineBounded(out, 60*time.Second)
	if err != nil || strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill() // ignore error: best effort
		return memSample{}, fmt.Errorf("bare mcp-go holder: %q %v", line, err)
	}
	var m memSample
	settle()
	m.hostKB = statusKB(cmd.Process.Pid, "VmRSS")
	m.anonKB = statusKB(cmd.Process.Pid, "RssAnon")
	m.treeKB, _ = rssTree(cmd.Process.Pid)
	return m, nil
}

func readLineBounded(r io.Reader, d time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(d):
		return "", errors.New("timed out")
	}
}

func (b *bench) readyHub(n int, withMem bool) (time.Duration, memSample, error) {
	ctx, cancel := withTimeout(90 * time.Second)
	defer cancel()
	t0 := time.Now()
	h, err := startHub(b.cfg.node, b.cfg.hubJS, b.home("hub"), b.serverMap(n))
	if err != nil {
		return 0, memSample{}, err
	}
	defer h.stop()
	if err := h.waitReady(ctx, n, b.cfg.poll); err != nil {
		return 0, memSample{}, err
	}
	d := time.Since(t0)
	var m memSample
	if withMem {
		for i := range n {
			want := "warm-" + serverName(i)
			got, err := h.callTool(ctx, serverName(i), echoTool, echoArgs(want))
			if err == nil {
				err = checkEcho(got, want)
			}
			if err != nil {
				return 0, m, err
			}
		}
		settle()
		m.hostKB = statusKB(h.pid(), "VmRSS")
		m.anonKB = statusKB(h.pid(), "RssAnon")
		m.treeKB, _ = rssTree(h.pid())
	}
	return d, m, nil
}

// ---- big results ------------------------------------------------------------------------------

func (b *bench) big(size int) []row {
	mb := size / 1_000_000
	rt := row{name: fmt.Sprintf("%d MB result: call time (capped to 1 MiB)", mb), unit: "ms",
		note: "switchboard: callTool of mcptest big, result capped to 1 MiB before it reaches the editor; " +
			"baseline: bare mcp-go client receiving it and applying the same cap, in its own process; mcp-hub: no cap, the whole result comes back over HTTP"}
	pk := row{name: fmt.Sprintf("%d MB result: host peak memory (VmHWM)", mb), unit: "MB",
		note: "VmHWM of a fresh host process after one such call (includes its startup)"}
	var times, peaks [3][]float64
	var t [3]tally
	measure := [3]func(int) (time.Duration, int64, error){subjSB: b.bigSB, subjBase: b.bigBase, subjHub: b.bigHub}
	for run := range b.cfg.bigRuns {
		for _, s := range b.order(run) {
			if t[s].giveUp(len(times[s])) {
				continue
			}
			d, hwm, err := measure[s](size)
			if t[s].record(err) {
				times[s], peaks[s] = append(times[s], ms(d)), append(peaks[s], float64(hwm)/1024)
			}
			b.logf("big %d run %d subject %d: %v hwm %d KiB err %v", size, run, s, d, hwm, err)
		}
	}
	rt.sb, rt.base, rt.hub = figOf(times[subjSB], t[subjSB]), figOf(times[subjBase], t[subjBase]), figOf(times[subjHub], t[subjHub])
	pk.sb, pk.base, pk.hub = figOf(peaks[subjSB], t[subjSB]), figOf(peaks[subjBase], t[subjBase]), figOf(peaks[subjHub], t[subjHub])
	return []row{rt, pk}
}

func (b *bench) bigSB(size int) (time.Duration, int64, error) {
	c, _, err := b.startSB(1)
	if err != nil {
		return 0, 0, err
	}
	defer b.stopSB(c)
	ctx, cancel := withTimeout(120 * time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := b.sbCall(ctx, c, serverName(0), bigTool, bigArgs(size))
	d := time.Since(t0)
	if err != nil {
		return 0, 0, err
	}
	if !res.Truncated || res.Bytes != size || len(res.Text) > 1<<20+200 {
		return 0, 0, fmt.Errorf("switchboard big %d: truncated=%v bytes=%d text=%d, want truncated, bytes=%d, text ≤ 1 MiB + marker",
			size, res.Truncated, res.Bytes, len(res.Text), size)
	}
	return d, statusKB(c.pid(), "VmHWM"), nil
}

func (b *bench) bigBase(size int) (time.Duration, int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(self, "_big", jsonString(b.spec()), b.home("bare"), fmt.Sprint(size))
	cmd.Stderr = b.log
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("bare mcp-go big: %w", err)
	}
	var r struct {
		NS    int64 `json:"ns"`
		HWMKB int64 `json:"hwmKB"`
		Bytes int   `json:"bytes"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, err
	}
	if r.Bytes != size {
		return 0, 0, fmt.Errorf("bare mcp-go big: got %d bytes, want %d", r.Bytes, size)
	}
	return time.Duration(r.NS), r.HWMKB, nil
}

func (b *bench) bigHub(size int) (time.Duration, int64, error) {
	h, err := startHub(b.cfg.node, b.cfg.hubJS, b.home("hub"), b.serverMap(1))
	if err != nil {
		return 0, 0, err
	}
	defer h.stop()
	ctx, cancel := withTimeout(120 * time.Second)
	defer cancel()
	if err := h.waitReady(ctx, 1, b.cfg.poll); err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	got, err := h.callTool(ctx, serverName(0), bigTool, bigArgs(size))
	d := time.Since(t0)
	if err != nil {
		return 0, 0, err
	}
	if len(got) != size {
		return 0, 0, fmt.Errorf("mcp-hub big: got %d bytes, want %d", len(got), size)
	}
	return d, statusKB(h.pid(), "VmHWM"), nil
}
