package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
	mcpstdio "github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// sweepDelay is how long after start the orphan sweep runs.
const sweepDelay = 2 * time.Second

// startGCPercent is the host's GC target until its start has settled, and settleLimit the longest
// the start is given to settle (see runServe).
const (
	startGCPercent = 100
	settleLimit    = 30 * time.Second
)

// runServe is `switchboard serve [--stdio] [--log FILE]`: the LSP server on stdin/stdout.
// stdout carries LSP frames only; the log goes to FILE (debug and up) or to stderr (errors only:
// editors show every stderr line as an error; warnings reach the editor as window/logMessage).
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("stdio", true, "serve on stdin/stdout (the default; accepted for vscode-languageclient)")
	logFile := fs.String("log", "", "write the log to `FILE` (debug level) instead of stderr (errors only)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` when the host exits (for go tool pprof)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchboard serve [--stdio] [--log FILE] [--cpuprofile FILE]\n\nRuns the language server on stdin/stdout; editors start it. Try `switchboard check` in a terminal.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "switchboard serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	go warmCodecs() // beside the host's own set-up (lspserve.go)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	signalsSet, unnotify := notifySignals(stop)
	defer unnotify()
	// The log's writes wait for SIGPIPE's notification as the editor's do (notifySignals): a line
	// to a stderr whose reader is gone must not kill the host.
	logTo := afterSignals{stderr, signalsSet}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "switchboard serve: --cpuprofile: %v\n", err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile() // before the file closes
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "switchboard serve: --cpuprofile: %v\n", err)
			}
		}()
	}

	var handler slog.Handler = slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelError})
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "switchboard serve: %v\n", err)
			return 1
		}
		defer f.Close()
		handler = slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})
	}

	// A host that was killed (SIGKILL, OOM) could not end what its servers started; its servers
	// died with it (parent-death signal), their children are ended here (Linux; mcpbridge). Off
	// the start-up path, and later than it: it reads /proc (about 2 ms per 100 processes, much
	// more on a busy machine) and touches only processes of hosts that are no longer running, so
	// it waits until initialize and the first servers' start are done instead of taking a core
	// from them (cmd/sbbench "first call answered after process start").
	time.AfterFunc(sweepDelay, func() {
		if n := mcpstdio.SweepOrphans(); n > 0 {
			slog.New(handler).Warn("ended processes left behind by an MCP server of a Switchboard host that did not exit cleanly", "count", n)
		}
	})

	// stdout belongs to the LSP stream: anything else printing to os.Stdout by mistake goes to
	// stderr instead of corrupting a frame.
	out, ok := stdout.(*os.File)
	if !ok {
		out = os.Stdout
	}
	os.Stdout = os.Stderr

	// The host lives as long as the editor and idles most of the time with a few MB of live heap:
	// a tighter GC target keeps its resident memory small (about 15% less RSS with 30 servers,
	// cmd/sbbench) at a cost only paid while large results are decoded. GOGC still overrides it.
	// Until the start has settled the target is the runtime's default instead: a start allocates
	// about 2 MB before its first call is answered, nearly all of it garbage soon after, and at
	// GOGC=50 (a 2 MB goal) one collection fell in the middle of it, during the first server's
	// start or the first call, with the page faults of the runtime's first use of its mark
	// structures (about 140 of a start's 1,080, at about 13 µs each on the project's machine
	// kind; GODEBUG=gctrace=1 and perf record -e page-faults over cmd/sbbench's first-call runs).
	// The settled host collects once (host.App's releaseStartMemory) and keeps the tight target
	// from then on while it idles (gcPace: the default again while tool calls stream through it).
	tightGC := os.Getenv("GOGC") == ""
	if tightGC {
		debug.SetGCPercent(startGCPercent)
	}
	// The first server's start needs the spawner's thread and the runtime's pidfd check: both
	// now, in the background, instead of after the editor's initialize.
	mcpstdio.Prewarm()
	settled := sync.OnceFunc(func() {
		if tightGC {
			newGCPace().start() // tight while idle, the default while calls stream (gcpace.go)
		}
	})
	// Settled comes a second after the first servers' start (longer while calls run from the
	// start on); a host whose servers take long to start is settled by time instead.
	time.AfterFunc(settleLimit, settled)

	in, restore := pollableStdin()
	defer restore()
	out, restoreOut := pollableStdout(out)
	defer restoreOut()
	std := newStdio(in, out)
	std.signalsSet = signalsSet
	err := serveLSP(ctx, std, host.Options{
		Logger: slog.New(handler),
		Settled: func() {
			relayProcs(os.Getenv)
			settled()
		},
		Policy: policyPaths(),
		// Servers marked "shared" attach to the per-user daemon, which the first window that
		// needs it starts (daemon.go); no daemon starts while no server is marked shared.
		Broker:        &broker.Config{Build: version, Log: slog.New(handler)},
		DaemonCommand: daemonCommand,
	})
	switch {
	case errors.Is(err, errNoShutdown), errors.Is(err, errDisconnected):
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "switchboard serve: %v\n", err)
		return 1
	}
	return 0
}

// notifySignals makes SIGINT, SIGTERM and SIGHUP call stop and SIGPIPE harmless, as
// signal.NotifyContext and signal.Notify would, but on a goroutine of its own; it returns a channel
// closed once they are set, and unnotify, which gives the first three their default effect back.
// SIGHUP too: a terminal closed under the editor (Neovim in a terminal window) hangs up its
// process group; the host then ends as for SIGTERM (servers ended, the audit log's last lines
// written), not by the signal's default. A write to a stdout whose reader is gone fails with
// EPIPE, and the LSP stream ends the host cleanly (exit 1, servers ended), instead of SIGPIPE
// killing it where stdout is an os.File (a FIFO, one shared with stderr, a kernel that refuses
// RWF_NOWAIT on pipes): os/signal's rule once SIGPIPE is notified; stdio's reads and writes wait
// for the channel, so that no message is read (no server started) or written before it. Started servers get the default disposition back at exec.
//
// Off the start's path: os/signal's first use starts the goroutine and the thread that own the
// signal mask and enables each signal in a round trip with them, about 1 ms of the 22 between the
// host's exec and its first server's (uprobes on the host, cmd/sbbench first call).
func notifySignals(stop context.CancelFunc) (set <-chan struct{}, unnotify func()) {
	done := make(chan struct{})
	got := make(chan os.Signal, 1)
	go func() {
		signal.Notify(got, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		close(done)
		<-got
		stop()
	}()
	return done, func() {
		<-done
		signal.Stop(got)
		select {
		case got <- nil: // the goroutine waits no more (a signal may have filled it already)
		default:
		}
	}
}

// afterSignals is w whose writes wait until set is closed (notifySignals).
type afterSignals struct {
	w   io.Writer
	set <-chan struct{}
}

func (a afterSignals) Write(p []byte) (int, error) {
	<-a.set
	return a.w.Write(p)
}

// stdio joins stdin and stdout into the connection the host serves. Reads go straight to stdin,
// without a second copy of every byte through a pipe (cmd/sbbench: about 6% of host CPU per
// call). With read deadlines (a pollable stdin, pollableStdin) the framer reads it on the
// goroutine that asks for the next frame and ends a read by moving the deadline; without them it
// reads on a goroutine of its own and stops waiting for it when the connection is closed. Either
// way the host can exit while the editor keeps stdin open. A polled stdin or stdout is read or
// written with raw system calls (rawio: no wake-up of the runtime's monitor thread per message).
// The same holds for stdout once the host leaves (Leave): a polled stdout's write ends by its
// deadline, and a blocking one (one pipe with stderr, a terminal) is written on a goroutine of
// its own, which Leave stops waiting for.
type stdio struct {
	in  rawio.Conn
	out rawio.Conn
	// blocking: stdout takes no deadlines (the runtime does not poll it).
	blocking bool
	// signalsSet, when not nil, is closed once the signals are set (notifySignals): reads and
	// writes wait for it.
	signalsSet <-chan struct{}
	left       chan struct{} // closed by Leave
	leaveOnce  sync.Once
}

func newStdio(in *os.File, out *os.File) *stdio {
	s := &stdio{in: rawio.Or(in), out: rawio.Or(out), left: make(chan struct{})}
	s.blocking = s.out.SetWriteDeadline(time.Time{}) != nil
	return s
}

// Read waits for the signals as Write does: no editor message is read, and so no server started,
// before SIGTERM ends the host cleanly.
func (s *stdio) Read(p []byte) (int, error) {
	if s.signalsSet != nil {
		<-s.signalsSet
	}
	return s.in.Read(p)
}

// SetReadDeadline is os.File's: it fails (os.ErrNoDeadline) on a stdin the runtime does not poll.
func (s *stdio) SetReadDeadline(t time.Time) error { return s.in.SetReadDeadline(t) }

func (s *stdio) Write(p []byte) (int, error) {
	if s.signalsSet != nil {
		<-s.signalsSet
	}
	if !s.blocking {
		return s.out.Write(p)
	}
	select {
	case <-s.left:
		return 0, errLeft
	default:
	}
	// A copy: the write may go on after Leave, when p is the caller's again.
	b := append([]byte(nil), p...)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := s.out.Write(b)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-s.left:
		return 0, errLeft // the write, if it waits for an editor that stopped reading, ends with the process
	}
}

// errLeft is a write to the editor after Leave.
var errLeft = errors.New("switchboard serve: the host left the editor")

// Leave ends the writes to the editor for good (lspconn.Stream.Leave): a write waiting for an
// editor that stopped reading fails now, and every later one at once. A polled stdout's write
// deadline, which nothing else sets, goes to the past; a blocking stdout's write is no longer
// waited for. Without it, a host whose editor stopped reading and then closed stdin never exited
// (TestExitEditorStoppedReading).
func (s *stdio) Leave() error {
	s.leaveOnce.Do(func() { close(s.left) })
	if s.blocking {
		return nil
	}
	return s.out.SetWriteDeadline(aLongTimeAgo)
}

// aLongTimeAgo is a deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// Close does nothing: the framer ends its own wait for stdin (a pollable stdin's read by moving
// its deadline; a blocking one's read, which nothing can interrupt, it stops waiting for), and
// stdout stays open until the process exits so a late write fails quietly.
func (s *stdio) Close() error { return nil }

// relayProcs gives the host one P (runtime.GOMAXPROCS(1)) once its first servers have started, on
// Linux, unless GOMAXPROCS is set in the environment. The start spawns and initializes every server
// at once and uses every core (with one P from the start, 30 servers were ready 10–20% later and
// the first call's ratio to a bare client rose from 1.15–1.52x to 1.65–1.78x), but after it the
// host is a relay: a call wakes it for the editor's request and for the server's answer, and with a
// second P every goroutine it hands the call to (the next reader, the caller waiting for the
// server's answer, the audit writer) wakes a second thread that finds nothing to do. With one P
// those hand-offs stay on the thread that is awake (cmd/sbbench, server-everything echo, six
// interleaved runs against two Ps: 7 context switches per call instead of 12, host CPU per call
// 13–28% lower, p50 about 8% lower, 8-caller throughput within 7%; the 50 MB result's time and peak
// unchanged). Work that needs a core for long, a large result being decoded, is preempted every 10
// ms like any goroutine, so requests are still answered while it runs. Starts after the first (a
// changed configuration, many servers reconnecting at once) run on the one P: 10–20% slower for 30
// servers, a cost paid rarely.
func relayProcs(getenv func(string) string) {
	if runtime.GOOS != "linux" || getenv("GOMAXPROCS") != "" {
		return // measured on Linux only
	}
	runtime.GOMAXPROCS(1)
}
