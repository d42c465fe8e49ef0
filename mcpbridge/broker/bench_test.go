//go:build unix

package broker

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// benchCalls makes b.N echo calls over rw, one at a time, as a window's agent does.
func benchCalls(b *testing.B, w io.Writer, r *bufio.Reader) {
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if _, err := r.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ResetTimer()
	for i := range b.N {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`+"\n", i+1)
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallDirect is the floor: mcptest on the caller's own pipes, as in-window.
func BenchmarkCallDirect(b *testing.B) {
	cmd := exec.Command(mcptestBin)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	benchCalls(b, in, bufio.NewReader(out))
}

// BenchmarkCallShared is the same call through the daemon (goal: at most 1.25x the floor).
func BenchmarkCallShared(b *testing.B) {
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, Options{Dir: dir + "/s", Idle: time.Minute, Ready: closeOnWrite(ready)})
	}()
	defer func() { cancel(); <-done }()
	<-ready
	c, err := Attach(ctx, Config{Dir: dir + "/s"}, request(launch()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchCalls(b, c, bufio.NewReader(c))
}

// Profiles of a daemon the benchmark starts (BenchmarkRelay/daemon): set these to file paths to
// get its CPU and allocation profiles (go tool pprof), written as it exits at the end.
const (
	cpuProfileVar = "BROKER_BENCH_CPUPROFILE"
	memProfileVar = "BROKER_BENCH_MEMPROFILE"
)

// BenchmarkRelay is one window's tools/call (mcptest's echo) made as the window makes it: by its
// stdio transport (mcpbridge/stdio), the same code in-window and shared.
//
//   - direct: the server on the window's own pipes, the in-window floor;
//   - daemon: through a daemon in a process of its own, as `switchboard daemon` runs: the
//     window, socket, daemon, pipe, server hop the goal is about (allocs/op: the window's only);
//   - inproc: through a daemon in this process (allocs/op: the window's and the daemon's).
//
// Besides ns/op it reports the CPU time per call of each process (window-cpu-ns, daemon-cpu-ns,
// server-cpu-ns, all threads) and the daemon's context switches per call: on a loaded machine
// these move far less than the wall time.
func BenchmarkRelay(b *testing.B) {
	for _, mode := range []string{"direct", "daemon", "inproc"} {
		b.Run(mode, func(b *testing.B) { benchRelay(b, mode) })
	}
}

func benchRelay(b *testing.B, mode string) {
	r := startRelay(b, mode)
	defer r.close()
	w0, d0, s0 := selfCPU(), procCPU(r.daemonPid), procCPU(r.serverPid)
	b.ResetTimer()
	for i := range b.N {
		r.call(i)
	}
	b.StopTimer()
	w1, d1, s1 := selfCPU(), procCPU(r.daemonPid), procCPU(r.serverPid)
	n := float64(b.N)
	b.ReportMetric(float64(w1-w0)/n, "window-cpu-ns/op")
	b.ReportMetric(float64(s1.ns-s0.ns)/n, "server-cpu-ns/op")
	if r.daemonPid != 0 {
		b.ReportMetric(float64(d1.ns-d0.ns)/n, "daemon-cpu-ns/op")
		b.ReportMetric(float64(d1.switches-d0.switches)/n, "daemon-cs/op")
	}
}

// BenchmarkRelayPaired makes each call twice, on the window's own pipes and through a daemon
// process, alternating call by call, and reports both medians and their ratio (the goal: at most
// 1.25x): on a loaded machine, load that comes and goes falls on both sides alike, which
// separate runs of BenchmarkRelay/direct and /daemon cannot promise. ns/op is one pair.
func BenchmarkRelayPaired(b *testing.B) {
	direct, shared := startRelay(b, "direct"), startRelay(b, "daemon")
	defer direct.close()
	defer shared.close()
	times := [2][]time.Duration{make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)}
	b.ResetTimer()
	for i := range b.N {
		for side, r := range []*relay{direct, shared} {
			t0 := time.Now()
			r.call(i)
			times[side] = append(times[side], time.Since(t0))
		}
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2])
	}
	b.ReportMetric(p50(times[0]), "direct-p50-ns")
	b.ReportMetric(p50(times[1]), "daemon-p50-ns")
	b.ReportMetric(p50(times[1])/p50(times[0]), "daemon/direct-p50")
}

// relay is one window's transport to mcptest, initialized and warm, as BenchmarkRelay's mode
// says.
type relay struct {
	call                 func(i int)
	daemonPid, serverPid int
	close                func()
}

func startRelay(b *testing.B, mode string) *relay {
	var cleanup []func()
	r := &relay{close: func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	log := slog.New(slog.DiscardHandler)
	t := stdio.NewTransport(mcptestBin, nil, []string{"PATH=" + os.Getenv("PATH")}, "", 64<<20, log)
	var conn *Conn
	if mode != "direct" {
		dir, err := os.MkdirTemp("", "sb")
		if err != nil {
			b.Fatal(err)
		}
		cleanup = append(cleanup, func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o700) // ignore error: EnsureDir says
		cfg := Config{Dir: dir, Build: "test", Heartbeat: -1}
		if mode == "inproc" {
			ctx, cancel := context.WithCancel(context.Background())
			ready, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				Serve(ctx, Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: closeOnWrite(ready)})
			}()
			cleanup = append(cleanup, func() { cancel(); <-done })
			<-ready
		} else {
			cfg.Start = func(string) *exec.Cmd {
				cmd := daemonCmd(dir, time.Minute)("")
				for _, v := range []string{cpuProfileVar, memProfileVar} {
					if p := os.Getenv(v); p != "" {
						abs, _ := filepath.Abs(p) // ignore error: the daemon runs in "/"
						cmd.Env = append(cmd.Env, v+"="+abs)
					}
				}
				return cmd
			}
			cleanup = append(cleanup, func() {
				if r.daemonPid == 0 {
					return
				}
				Stop(context.Background(), cfg) // ignore error: a dead daemon stops nothing
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for !gone(r.daemonPid) { // the profiles are written as it exits
					<-tick.C
				}
			})
		}
		t.Shared(func(ctx context.Context) (stdio.Stream, error) {
			c, err := Attach(ctx, cfg, request(launch()))
			conn = c
			return c, err
		})
	}
	ctx := context.Background()
	if err := t.Start(ctx); err != nil {
		b.Fatal(err)
	}
	cleanup = append(cleanup, func() { t.Close() })
	if mode != "direct" {
		if t.SharedStream() == nil {
			b.Fatal("the transport runs the server itself: the attach failed")
		}
		if mode == "daemon" {
			r.daemonPid = conn.DaemonPid()
		}
	}
	init := []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	if _, err := t.RoundTripLine(ctx, mcp.NewRequestId("init"), init, time.Minute); err != nil {
		b.Fatal(err)
	}
	if err := t.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/initialized"}}); err != nil {
		b.Fatal(err)
	}
	r.serverPid = t.Pid()
	if conn != nil {
		r.serverPid = conn.ServerPid()
	}
	r.call = func(i int) {
		id := "c" + strconv.Itoa(i)
		line := []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
		resp, err := t.RoundTripLine(ctx, mcp.NewRequestId(id), line, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if resp.Error != nil || !bytes.Contains(resp.Result, []byte("hello")) {
			b.Fatalf("call %d: %s", i, resp.Frame.Data)
		}
	}
	for i := range 100 { // warm: the first calls grow buffers and tables
		r.call(-i - 1)
	}
	ok = true
	return r
}

// selfCPU is this process's CPU time (all threads, user and system), in ns.
func selfCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuUse is a process's CPU time and context switches, summed over its threads.
type cpuUse struct{ ns, switches int64 }

// procCPU reads pid's threads from /proc (zero where there is no /proc, or pid is 0).
func procCPU(pid int) cpuUse {
	var u cpuUse
	if pid == 0 {
		return u
	}
	task := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, _ := os.ReadDir(task)
	for _, tid := range tids {
		if b, err := os.ReadFile(task + "/" + tid.Name() + "/schedstat"); err == nil {
			if f := bytes.Fields(b); len(f) > 0 {
				ns, _ := strconv.ParseInt(string(f[0]), 10, 64)
				u.ns += ns
			}
		}
		b, _ := os.ReadFile(task + "/" + tid.Name() + "/status")
		for _, line := range bytes.Split(b, []byte("\n")) {
			for _, k := range []string{"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"} {
				if v, ok := bytes.CutPrefix(line, []byte(k)); ok {
					n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
					u.switches += n
				}
			}
		}
	}
	return u
}
