package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Shared servers (issue 32): one set of server processes for all of a user's windows, in the
// broker daemon. Each figure is against a baseline measured in the same run, the two sides
// alternating:
//
//   - memory: 6 windows (real `switchboard serve` processes) on 10 shared servers against ONE
//     window with the same 10 servers unshared: the summed RSS and PSS (/proc/PID/smaps_rollup:
//     pages shared between processes, such as the binary's, counted once in all) of the hosts,
//     the daemon and the servers. The run also counts the server processes: exactly 10, every one
//     a child of the one daemon, or the run fails.
//   - p50: callTool through the daemon against the same server in the window.
//   - first call: a second window's first call (from its process start) to a server another
//     window already runs shared, against a cold first call (one window starting the server).
//
// Each is measured with mcptest and, when it is installed, with server-everything (Node), whose
// processes are what the 715 MB per window was made of.

// sharedServerCount and sharedWindows are the setting.
const (
	sharedServerCount = 10
	sharedWindows     = 6
)

// sharedKind is one server program the shared rows run.
type sharedKind struct {
	label  string
	spec   serverSpec
	args   func(string) map[string]any
	prefix string // what its echo puts before the text
}

func (b *bench) sharedKinds() []sharedKind {
	ks := []sharedKind{{label: "mcptest", spec: b.mcptestSpec(), args: echoArgs}}
	if b.cfg.everything != "" {
		ks = append(ks, sharedKind{label: "server-everything", spec: serverSpec{Command: b.cfg.node, Args: []string{b.cfg.everything, "stdio"}},
			args: everythingArgs, prefix: "Echo: "})
	}
	return ks
}

// sharedEntries are n initializationOptions.servers entries of spec: different servers, as a
// user's ten are (the same program with another environment is another launch, so another
// instance), shared or not.
func sharedEntries(spec serverSpec, n int, shared bool) map[string]any {
	m := map[string]any{}
	for i := range n {
		e := map[string]any{"command": spec.Command, "args": spec.Args, "env": map[string]string{"SBBENCH_SERVER": strconv.Itoa(i)}}
		if shared {
			e["shared"] = true
		}
		m[serverName(i)] = e
	}
	return m
}

// sharedHome is a home whose windows share one daemon: its own runtime directory (0700), so the
// daemon is this run's alone and never the user's.
func (b *bench) sharedHome(kind string) (home string, env []string) {
	home = b.home(kind)
	run := filepath.Join(home, "run")
	_ = os.MkdirAll(run, 0o700) // ignore error: the window falls back to in-window, and the count check fails the run
	_ = os.Chmod(run, 0o700)    // ignore error: as above
	return home, []string{"XDG_RUNTIME_DIR=" + run}
}

// sharedOpts are the windows' settings: the daemon leaves one second after its last window.
var sharedOpts = map[string]any{"daemonIdleSeconds": 1}

// stopDaemon stops the daemon of home (switchboard daemon stop) and waits for pid to end.
func (b *bench) stopDaemon(home string, env []string, pid int) {
	cmd := exec.Command(b.cfg.switchboard, "daemon", "stop")
	cmd.Env = append(isolatedEnv(home), env...)
	_ = cmd.Run() // ignore error: it may have left already (idle)
	for range 100 {
		if pid <= 0 || !alive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.leaks = append(b.leaks, fmt.Sprintf("daemon pid %d did not stop", pid))
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// pssKB is a process's proportional set size (KiB), from /proc/PID/smaps_rollup.
func pssKB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// memOf sums RSS and PSS (KiB) over the processes of every tree rooted at roots, each once.
func memOf(roots ...int) (rss, pss int64, procs int) {
	seen := map[int]bool{}
	for _, r := range roots {
		for _, p := range descendants(r) {
			if seen[p] {
				continue
			}
			seen[p] = true
			rss += statusKB(p, "VmRSS")
			pss += pssKB(p)
			procs++
		}
	}
	return rss, pss, procs
}

// directChildren are pid's children.
func directChildren(pid int) []int {
	d := descendants(pid)
	var out []int
	for _, p := range d[1:] {
		if ppid(p) == pid {
			out = append(out, p)
		}
	}
	return out
}

func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// warmAll calls echo once on each of n servers through c (every window has used every server).
func (b *bench) warmAll(c *lspClient, k sharedKind, n int) error {
	ctx, cancel := withTimeout(60 * time.Second)
	defer cancel()
	for i := range n {
		want := "warm-" + serverName(i)
		res, err := b.sbCall(ctx, c, serverName(i), echoTool, k.args(want))
		if err == nil {
			err = checkEcho(res.Text, k.prefix+want)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// memSharedRun is one run of the shared side: 6 windows on 10 shared servers. It checks the
// process count (10 server processes, children of one daemon; none in a window) and returns the
// summed RSS and PSS in MB.
func (b *bench) memSharedRun(k sharedKind) (rssMB, pssMB float64, err error) {
	home, env := b.sharedHome("shared")
	daemon := 0
	var wins []*lspClient
	defer func() {
		for _, c := range wins {
			b.stopSB(c)
		}
		b.stopDaemon(home, env, daemon)
	}()
	entries := sharedEntries(k.spec, sharedServerCount, true)
	for i := range sharedWindows {
		c, _, err := b.startSBIn(b.cfg.switchboard, home, env, entries, sharedOpts, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("window %d: %w", i, err)
		}
		wins = append(wins, c)
		ctx, cancel := withTimeout(30 * time.Second)
		var st []serverStatus
		err = c.executeCommand(ctx, "switchboard.servers", nil, &st)
		cancel()
		if err != nil {
			return 0, 0, err
		}
		for _, s := range st {
			if s.Shared == nil {
				return 0, 0, fmt.Errorf("window %d: server %s is not shared", i, s.Name)
			}
			if daemon == 0 {
				daemon = s.Shared.DaemonPid
			}
			if s.Shared.DaemonPid != daemon {
				return 0, 0, fmt.Errorf("window %d: server %s is in daemon %d, not %d", i, s.Name, s.Shared.DaemonPid, daemon)
			}
		}
		if err := b.warmAll(c, k, sharedServerCount); err != nil {
			return 0, 0, fmt.Errorf("window %d: %w", i, err)
		}
	}
	settle()
	// The count the goal is about: server process trees are the daemon's children, and no
	// window has a child but the daemon (which the first window started, in a session of its own).
	if got := directChildren(daemon); len(got) != sharedServerCount {
		return 0, 0, fmt.Errorf("the daemon (pid %d) runs %d server processes, want %d", daemon, len(got), sharedServerCount)
	}
	roots := []int{daemon}
	for i, c := range wins {
		for _, p := range directChildren(c.pid()) {
			if p != daemon {
				return 0, 0, fmt.Errorf("window %d runs a process of its own (pid %d)", i, p)
			}
		}
		roots = append(roots, c.pid())
	}
	rss, pss, _ := memOf(roots...)
	return float64(rss) / 1024, float64(pss) / 1024, nil
}

// memOwnRun is one run of the baseline: one window running the 10 servers itself.
func (b *bench) memOwnRun(k sharedKind) (rssMB, pssMB float64, err error) {
	home, env := b.sharedHome("own")
	c, _, err := b.startSBIn(b.cfg.switchboard, home, env, sharedEntries(k.spec, sharedServerCount, false), nil, nil)
	if err != nil {
		return 0, 0, err
	}
	defer b.stopSB(c)
	if err := b.warmAll(c, k, sharedServerCount); err != nil {
		return 0, 0, err
	}
	settle()
	if got := directChildren(c.pid()); len(got) != sharedServerCount {
		return 0, 0, fmt.Errorf("the window runs %d server processes, want %d", len(got), sharedServerCount)
	}
	rss, pss, _ := memOf(c.pid())
	return float64(rss) / 1024, float64(pss) / 1024, nil
}

// sharedMemRows alternates the two sides for cfg.runs runs (at least 3).
func (b *bench) sharedMemRows(k sharedKind) []perfRow {
	var rss, pss [2][]float64
	var t [2]tally
	runs := max(3, min(b.cfg.runs, 5))
	sides := [2]func(sharedKind) (float64, float64, error){b.memSharedRun, b.memOwnRun}
	for run := range runs {
		for j := range 2 {
			i := (run + j) % 2
			if t[i].giveUp(len(rss[i])) {
				continue
			}
			r, p, err := sides[i](k)
			if t[i].record(err) {
				rss[i] = append(rss[i], r)
				pss[i] = append(pss[i], p)
			}
			b.logf("shared memory %s run %d side %d: RSS %.1f MB, PSS %.1f MB %v", k.label, run, i, r, p, err)
		}
	}
	a, own := fmt.Sprintf("%d windows, shared", sharedWindows), "1 window, unshared"
	what := fmt.Sprintf("%d servers (%s)", sharedServerCount, k.label)
	return []perfRow{
		{name: fmt.Sprintf("total PSS of hosts, daemon and servers: %d windows on %s shared, against 1 window running them", sharedWindows, what), unit: "MB",
			a: figOf(pss[0], t[0]), b: figOf(pss[1], t[1]), aWho: a, bWho: own, goal: "≤ 1.2x", max: 1.2},
		{name: fmt.Sprintf("total RSS of hosts, daemon and servers: %d windows on %s shared, against 1 window running them", sharedWindows, what), unit: "MB",
			a: figOf(rss[0], t[0]), b: figOf(rss[1], t[1]), aWho: a, bWho: own, goal: "≤ 1.2x", max: 1.2},
	}
}

// sharedCaller is switchboard with spec as its one server, shared, in a daemon of its own.
func (b *bench) sharedCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		home, env := b.sharedHome("sbshared")
		entries := sharedEntries(spec, 1, true)
		c, _, err := b.startSBIn(b.cfg.switchboard, home, env, entries, sharedOpts, nil)
		if err != nil {
			return nil, err
		}
		ctx, cancel := withTimeout(30 * time.Second)
		defer cancel()
		var st []serverStatus
		if err := c.executeCommand(ctx, "switchboard.servers", nil, &st); err != nil || len(st) != 1 || st[0].Shared == nil {
			b.stopSB(c)
			return nil, fmt.Errorf("the server is not shared: %v %+v", err, st)
		}
		daemon := st[0].Shared.DaemonPid
		r := &running{host: c.pid(), stop: func() { b.stopSB(c); b.stopDaemon(home, env, daemon) }}
		if kids := directChildren(daemon); len(kids) == 1 {
			r.server = kids[0]
		}
		r.call = b.lspEcho(c, args, prefix)
		return r, nil
	}
}

// ownCaller is switchboard with spec as its one server (with the environment the shared one
// has, so both run the same server the same way), in the window.
func (b *bench) ownCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		home, env := b.sharedHome("sbown")
		c, _, err := b.startSBIn(b.cfg.switchboard, home, env, sharedEntries(spec, 1, false), nil, nil)
		if err != nil {
			return nil, err
		}
		r := &running{host: c.pid(), stop: func() { b.stopSB(c) }}
		if kids := directChildren(c.pid()); len(kids) == 1 {
			r.server = kids[0]
		}
		r.call = b.lspEcho(c, args, prefix)
		return r, nil
	}
}

// ownRelayedCaller is ownCaller with the server behind `sbbench _relay` (childRelay).
func (b *bench) ownRelayedCaller(spec serverSpec, args func(string) map[string]any, prefix string) caller {
	return func() (*running, error) {
		relayed, err := relayedSpec(spec)
		if err != nil {
			return nil, err
		}
		r, err := b.ownCaller(relayed, args, prefix)()
		if err != nil {
			return nil, err
		}
		if r.server != 0 { // the relay: the server is its child
			if kids := directChildren(r.server); len(kids) == 1 {
				r.server = kids[0]
			}
		}
		return r, nil
	}
}

// firstCallIn starts a window in home and calls echo on s00 as soon as it can (as firstCallSB);
// the time is from the process start to the answer, in ms.
func (b *bench) firstCallIn(home string, env []string, entries map[string]any, opts map[string]any, k sharedKind) (float64, *lspClient, error) {
	changed := make(chan struct{}, 1)
	ctx, cancel := withTimeout(120 * time.Second)
	defer cancel()
	t0 := time.Now()
	c, err := startSwitchboardEnv(b.cfg.switchboard, home, b.cfg.profiles, env, func(method string, _ json.RawMessage) {
		if method == "switchboard/serversChanged" {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return 0, nil, err
	}
	initOpts := map[string]any{"servers": entries}
	for key, v := range opts {
		initOpts[key] = v
	}
	if err := c.initialize(ctx, initOpts); err != nil {
		b.stopSB(c)
		return 0, nil, fmt.Errorf("initialize: %w", err)
	}
	for {
		res, err := b.sbCall(ctx, c, serverName(0), echoTool, k.args("first"))
		if err == nil {
			d := ms(time.Since(t0))
			if err := checkEcho(res.Text, k.prefix+"first"); err != nil {
				b.stopSB(c)
				return 0, nil, err
			}
			return d, c, nil
		}
		if !strings.Contains(err.Error(), "Unknown tool") {
			b.stopSB(c)
			return 0, nil, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			b.stopSB(c)
			return 0, nil, fmt.Errorf("switchboard: no answer to the first call: %w", ctx.Err())
		}
	}
}

// firstWarm: a first window runs the server shared (and has called it); the figure is a second
// window's first call, from its process start.
func (b *bench) firstWarm(k sharedKind) (float64, error) {
	home, env := b.sharedHome("warm")
	entries := sharedEntries(k.spec, 1, true)
	a, _, err := b.startSBIn(b.cfg.switchboard, home, env, entries, sharedOpts, nil)
	if err != nil {
		return 0, err
	}
	daemon := 0
	defer func() { b.stopSB(a); b.stopDaemon(home, env, daemon) }()
	ctx, cancel := withTimeout(30 * time.Second)
	defer cancel()
	var st []serverStatus
	if err := a.executeCommand(ctx, "switchboard.servers", nil, &st); err != nil || len(st) != 1 || st[0].Shared == nil {
		return 0, fmt.Errorf("the first window's server is not shared: %v %+v", err, st)
	}
	daemon = st[0].Shared.DaemonPid
	if err := b.warmAll(a, k, 1); err != nil {
		return 0, err
	}
	d, c, err := b.firstCallIn(home, env, entries, sharedOpts, k)
	if err != nil {
		return 0, err
	}
	defer b.stopSB(c)
	if err := c.executeCommand(ctx, "switchboard.servers", nil, &st); err != nil || len(st) != 1 || st[0].Shared == nil || st[0].Shared.DaemonPid != daemon {
		return 0, fmt.Errorf("the second window did not attach to the first one's instance: %v %+v", err, st)
	}
	return d, nil
}

// firstCold: one window starts the server itself and calls it.
func (b *bench) firstCold(k sharedKind) (float64, error) {
	home, env := b.sharedHome("cold")
	d, c, err := b.firstCallIn(home, env, sharedEntries(k.spec, 1, false), nil, k)
	if err != nil {
		return 0, err
	}
	b.stopSB(c)
	return d, nil
}

// sharedRows are issue 32's goals, for every server kind.
func (b *bench) sharedRows() []perfRow {
	var rows []perfRow
	for _, k := range b.sharedKinds() {
		rows = append(rows, b.sharedMemRows(k)...)
		warm, calls := b.cfg.warmup, b.cfg.calls
		if k.label == "server-everything" {
			warm, calls = b.cfg.warmup+b.cfg.warmServer, b.cfg.serverCalls
		}
		// The third subject is the floor of any daemon: the server in the window behind
		// `sbbench _relay` (one process that copies bytes, on one thread with raw system calls),
		// which pays the hop the daemon pays (a pipe each way and one more process to wake) and
		// does nothing else.
		p50, _ := b.interleavedP50("shared p50 "+k.label, warm, calls, []caller{
			b.sharedCaller(k.spec, k.args, k.prefix), b.ownCaller(k.spec, k.args, k.prefix), b.ownRelayedCaller(k.spec, k.args, k.prefix)})
		rows = append(rows, perfRow{name: "callTool p50 through the daemon, against the same server in the window (" + k.label + ")", unit: "µs",
			a: p50[0], b: p50[1], aWho: "shared", bWho: "in the window", goal: "≤ 1.25x", max: 1.25},
			perfRow{name: "callTool p50, the same server in the window behind a byte relay (the floor of one more process), against it in the window (" + k.label + ")", unit: "µs",
				a: p50[2], b: p50[1], aWho: "in the window, relayed", bWho: "in the window"},
			perfRow{name: "callTool p50 through the daemon, against the same server in the window behind a byte relay: what the daemon adds to the hop (" + k.label + ")", unit: "µs",
				a: p50[0], b: p50[2], aWho: "shared", bWho: "in the window, relayed"})
		w, c := b.measurePair("shared first call "+k.label, max(b.cfg.runs, firstCallRuns),
			func() (float64, error) { return b.firstWarm(k) }, func() (float64, error) { return b.firstCold(k) })
		rows = append(rows, perfRow{name: "a second window's first call to a warm shared server, against a cold first call, from process start (" + k.label + ")", unit: "ms",
			a: w, b: c, aWho: "warm, shared", bWho: "cold, in the window", goal: "≤ 0.2x", max: 0.2})
	}
	return rows
}

// loadAverage is /proc/loadavg's first three fields, for the table's heading.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
