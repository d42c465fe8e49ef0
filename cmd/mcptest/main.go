// Command mcptest is a small MCP server for tests, demos and benchmarks of Switchboard.
//
// It speaks stdio by default, streamable HTTP with --http ADDR and SSE with --sse ADDR; both
// protocol eras, or only 2026-07-28 with --protocol 2026-07-28 (modern.go). Its tools
// are echo, big, slow, image, fail, add_tool and remove_tool (see tools.go), plus --tools N dummy
// tools, and with --tasks tools that run as MCP tasks (tasks.go). With --oauth it also serves a test authorization server and demands a Bearer (oauth.go). Fault flags make it misbehave in the ways a host must survive (see faults.go).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type options struct {
	name, instructions string
	httpAddr, sseAddr  string
	tools              int
	toolNamed          string

	exitAtStart    bool
	hangInitialize bool
	garbageStdout  bool
	ignoreDiscover bool
	crashAfter     int
	stormRate      int
	stormFor       time.Duration
	endlessLine    bool
	hugeFrameMB    int
	spawnChild     bool
	roots          bool
	elicit         bool
	sample         bool
	rich           bool
	spawnSetsid    bool
	linger         bool
	leaveGroup     bool
	startupDelay   time.Duration
	hostile        bool
	say            bool // faults.go: the tool say writes the client's lines verbatim
	oauth          oauthOptions
	protocol       string // modern.go
	record         string
	ttlMs          int64
	mrtr           bool
	withResources  bool
	resources      int
	page           int
	tasks          bool   // tasks.go
	taskState      string // tasks.go
	taskPollMs     int64
	taskTTLMs      int64
	taskStatus     bool   // tasks.go: notifications/tasks/status at every change
	taskPrefix     string // tasks.go: what a task id starts with
	apps           bool   // apps.go
	appsVersion    string // apps.go
	appsCSPInject  bool   // apps.go
	appsReadError  string // apps.go
	appsMany       int    // apps.go
}

// hostileText is what a hostile server puts in its stderr, tool descriptions and results: a screen
// clear, an OSC 52 clipboard write, BEL, a carriage return that rewrites the line, and RLO.
const hostileText = "clear\x1b[2J osc52\x1b]52;c;cm0gLXJmIH4=\x07 bel\a cr\rFAKE rlo\u202etxt.exe zw\u200b"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("mcptest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.name, "name", "mcptest", "server name (serverInfo.name)")
	fs.StringVar(&o.instructions, "instructions", "", "instructions sent in the initialize result")
	fs.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP on `ADDR` (endpoint /mcp; port 0 picks one, reported on stderr)")
	fs.StringVar(&o.sseAddr, "sse", "", "serve SSE on `ADDR` (endpoint /sse) instead of stdio")
	fs.IntVar(&o.tools, "tools", 0, "add `N` dummy tools dummy_1..dummy_N")
	fs.StringVar(&o.toolNamed, "tool-named", "", "add a dummy tool named `NAME` that returns its name (a name that holds another server's tool name, say)")
	fs.BoolVar(&o.exitAtStart, "exit-at-start", false, "fault: write to stderr and exit 3 at once")
	fs.BoolVar(&o.hangInitialize, "hang-initialize", false, "fault: read stdin but never answer")
	fs.BoolVar(&o.garbageStdout, "garbage-stdout", false, "fault: write lines that are not JSON-RPC to stdout, then serve")
	fs.BoolVar(&o.ignoreDiscover, "ignore-discover", false, "behave like a legacy server that ignores server/discover")
	fs.IntVar(&o.crashAfter, "crash-after", 0, "fault: exit 3 in the middle of tool call number `N`+1")
	fs.IntVar(&o.stormRate, "storm", 0, "fault: after the first tools/list send `N` tools/list_changed per second")
	fs.DurationVar(&o.stormFor, "storm-for", time.Second, "how long the --storm lasts")
	fs.BoolVar(&o.endlessLine, "endless-line", false, "fault: write one line to stdout that never ends")
	fs.IntVar(&o.hugeFrameMB, "huge-frame", 0, "fault: send a notification frame of `MB` megabytes at start")
	fs.DurationVar(&o.startupDelay, "startup-delay", 0, "wait `D` before serving (a slow-starting server, like npx fetching a package)")
	fs.BoolVar(&o.elicit, "elicit", false, "add tools ask (a form) and open_url (url mode) that ask the user through the client (elicitation/create)")
	fs.BoolVar(&o.rich, "rich", false, "add a tool rich returning a resource_link, an embedded resource and structuredContent with an outputSchema")
	fs.BoolVar(&o.sample, "sample", false, "add a tool summarize that asks the client's model (sampling/createMessage)")
	fs.BoolVar(&o.roots, "roots", false, "add a tool roots that asks the client for its roots (roots/list)")
	fs.BoolVar(&o.say, "say", false, "fault: add a tool say that writes each of its `lines` to the client verbatim before its result (a server that forges frames: questions, notifications, about any task or token); $TOKEN in a line is the call's own progress token")
	fs.BoolVar(&o.hostile, "hostile", false, "fault: put terminal escapes (ESC[2J, OSC 52, BEL, CR, RLO) in stderr, the exit-at-start message and a tool hostile (its description and result)")
	fs.BoolVar(&o.withResources, "resources", false, "offer resources (static, a counter that bump updates, templates with completion), prompts (review, with completion) and tools bump, add_resource, add_prompt (see resources.go)")
	fs.IntVar(&o.resources, "dummy-resources", 0, "with --resources, add `N` resources mcptest://dummy/1..N")
	fs.IntVar(&o.page, "page", 0, "list at most `N` entries per page (tools, resources, prompts: cursors)")
	fs.BoolVar(&o.spawnChild, "spawn-child", false, "start a grandchild (sleep) in the same process group and print its pid to stderr")
	fs.BoolVar(&o.linger, "linger", false, "fault: keep running after stdin ends (a server that does not notice its client is gone)")
	fs.BoolVar(&o.leaveGroup, "leave-group", false, "fault: move into the parent's process group at start, out of the group the client made for it (which it signals to end the server); with --linger, a server that only ending its own process stops")
	fs.BoolVar(&o.spawnSetsid, "spawn-setsid-child", false, "start a grandchild (sleep) in a new session (setsid: out of the process group) and print its pid to stderr")
	fs.StringVar(&o.protocol, "protocol", "", "serve only `REVISION` (2026-07-28: initialize is refused with -32022; see modern.go)")
	fs.StringVar(&o.record, "record", "", "append every message read (and, over stdio, written) to `FILE`")
	fs.Int64Var(&o.ttlMs, "ttl-ms", 0, "ttlMs of list results to modern clients (a cache hint)")
	fs.BoolVar(&o.mrtr, "mrtr", false, "add the tools mrtr_ask, mrtr_both, mrtr_loop and mrtr_unknown (on with --protocol 2026-07-28)")
	fs.BoolVar(&o.tasks, "tasks", false, "add the task tools task_slow, task_ask, task_fail, task_optional and task_nag, both eras, over stdio and streamable HTTP (see tasks.go)")
	fs.StringVar(&o.taskState, "task-state", "", "keep the tasks in `FILE`, so that a server started again knows them")
	fs.Int64Var(&o.taskPollMs, "task-poll-ms", 1000, "the pollInterval tasks announce, in milliseconds")
	fs.Int64Var(&o.taskTTLMs, "task-ttl-ms", 0, "the ttl tasks announce, in milliseconds (0: none)")
	fs.StringVar(&o.taskPrefix, "task-prefix", taskIDPrefix, "start every task id with `PREFIX` (a real server's ids need not say \"task\")")
	fs.BoolVar(&o.taskStatus, "task-status", false, "send notifications/tasks/status when a task is created and at every change of its status (2025-11-25)")
	fs.BoolVar(&o.apps, "apps", false, "add an MCP App: tool clock with a view (ui://mcptest/clock.html) and the app-only tool tick; a clock call with label \"change-view\" changes the view (its version +1) while it runs and returns once the client has listed the tools again (see apps.go)")
	fs.StringVar(&o.appsVersion, "apps-version", cmp.Or(os.Getenv("MCPTEST_APPS_VERSION"), "1"), "with --apps, the `VERSION` the view's HTML shows (a changed view is a changed tool; default $MCPTEST_APPS_VERSION or 1)")
	fs.BoolVar(&o.appsCSPInject, "apps-csp-inject", false, "with --apps, declare CSP entries that try to add a directive or a keyword")
	fs.IntVar(&o.appsMany, "apps-many", 0, "with --apps, `N` more tools (view_1 ...), each with a view of its own of 1 MiB (a server whose views together would take the host's memory)")
	fs.StringVar(&o.appsReadError, "apps-read-error", "", "with --apps, a read of the view fails with this `MESSAGE` (a server's words in the host's reason the view cannot be shown)")
	o.oauth.flags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "mcptest: "+format+"\n", a...) }

	if o.hostile {
		logf("%s", hostileText)
	}
	if o.exitAtStart {
		logf("exiting at start as asked")
		return 3
	}
	time.Sleep(o.startupDelay)
	if o.leaveGroup {
		if err := leaveGroup(); err != nil {
			logf("leave group: %v", err)
			return 1
		}
		logf("left the process group")
	}
	for _, setsid := range []bool{false, true} {
		if (setsid && !o.spawnSetsid) || (!setsid && !o.spawnChild) {
			continue
		}
		if err := spawnGrandchild(stderr, setsid); err != nil {
			logf("spawn child: %v", err)
			return 1
		}
	}
	switch {
	case o.endlessLine:
		return endlessLine(stdout)
	case o.hugeFrameMB > 0:
		if err := hugeFrame(stdout, o.hugeFrameMB); err != nil {
			return 1
		}
	case o.hangInitialize:
		logf("hanging: reading stdin, answering nothing")
		_, _ = io.Copy(io.Discard, stdin) // ignore error: ends with stdin
		return 0
	case o.garbageStdout:
		fmt.Fprintln(stdout, "this is not JSON-RPC")
		fmt.Fprintln(stdout, `{"not":"a message"}`)
		fmt.Fprintln(stdout, "\x00\x01\x02 binary junk")
	}

	if o.protocol != "" && !o.modernOnly() {
		logf("--protocol: only %s can be served alone", mcp.ProtocolVersion20260728)
		return 2
	}
	rec, err := openRecorder(o.record)
	if err != nil {
		logf("%v", err)
		return 1
	}
	s := newServer(o, logf)
	switch {
	case o.httpAddr != "":
		var hopts []server.StreamableHTTPOption
		if o.modernOnly() {
			hopts = append(hopts, server.WithStreamableHTTPProtocolVersions(mcp.ProtocolVersion20260728))
		}
		return serveHTTP(o.httpAddr, "/mcp", o.oauth.guard("/mcp", func(base string) http.Handler {
			var h http.Handler = server.NewStreamableHTTPServer(s.mcp, hopts...)
			if s.tasks != nil {
				h = taskHTTP(s.tasks, h) // taskhttp.go
			}
			return modernHTTP(o, rec, h)
		}), logf)
	case o.sseAddr != "":
		return serveHTTP(o.sseAddr, "/sse", o.oauth.guard("/sse", func(base string) http.Handler {
			return server.NewSSEServer(s.mcp, server.WithBaseURL(base))
		}), logf)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := &lockedWriter{w: stdout, rec: rec}
	in := stdioFilter(o, stdin, out, rec, s.tasks) // modern.go (and --ignore-discover, --tasks)
	err = server.NewStdioServer(s.mcp).Listen(ctx, in, out)
	if o.linger {
		// Nothing written here: a write to the dead client's stderr pipe would end the process
		// with SIGPIPE, which is exactly what a lingering server does not get.
		for {
			time.Sleep(time.Hour) // not select{}: the runtime would end a process with nothing left to run
		}
	}
	if err != nil && ctx.Err() == nil {
		logf("%v", err)
		return 1
	}
	return 0
}

// serveHTTP listens on addr (port 0 picks one) and reports "listening on http://HOST:PORT/PATH"
// on stderr once it accepts connections, so tests and scripts can find the URL.
func serveHTTP(addr, path string, handler func(base string) http.Handler, logf func(string, ...any)) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		logf("%v", err)
		return 1
	}
	base := "http://" + l.Addr().String()
	logf("listening on %s%s", base, path)
	if err := http.Serve(l, handler(base)); err != nil {
		logf("%v", err)
		return 1
	}
	return 0
}
