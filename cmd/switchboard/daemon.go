package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	mcpstdio "github.com/switchboard-dev/switchboard/mcpbridge/stdio"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

const daemonUsage = `usage: switchboard daemon status|stop|restart [--dir DIR] [--json]

The shared-server daemon holds one copy of each MCP server marked "shared" for all of your
editor windows. Windows start it when they need it; it exits a minute after the last one closed.

  status   show the daemon, its servers and how many windows use each
  stop     stop it now: its servers stop, windows using them show them stopped and say why
           (a Reconnect starts them again)
  restart  hand over to a new daemon: the next window starts one from its own binary; the
           running one finishes its windows' calls and exits when they have closed (its
           windows are told, and move to the new daemon within 10 minutes)
`

// runDaemon is `daemon status|stop|restart`, and the daemon itself: `switchboard daemon --dir
// DIR ...`, as a window starts it (daemonStart; only flags). Bare `switchboard daemon` and an
// unknown verb are usage errors: a person who types them means one of the verbs, and would
// otherwise get a daemon in the foreground that prints nothing.
func runDaemon(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, daemonUsage)
		return 2
	}
	switch args[0] {
	case "status", "stop", "restart":
		return runDaemonCtl(args[0], args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, daemonUsage)
		return 0
	}
	if !strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "switchboard daemon: unknown command %q (want status, stop or restart)\n\n%s", args[0], daemonUsage)
		return 2
	}
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "socket `DIR` (default $XDG_RUNTIME_DIR/switchboard)")
	idle := fs.Duration("idle", 60*time.Second, "exit this long after the last window left")
	logFile := fs.String("log", "", "log `FILE` (default $XDG_STATE_HOME/switchboard/daemon.log)")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "switchboard daemon: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *dir == "" {
		d, err := broker.DefaultDir()
		if err != nil {
			fmt.Fprintf(stderr, "switchboard daemon: %v\n", err)
			return 1
		}
		*dir = d
	}
	if *logFile == "" {
		*logFile = filepath.Join(permissions.StateDir(), "daemon.log")
	}
	// The daemon never writes to stdout; its log is a file of the user's (stderr may be /dev/null).
	var logw io.Writer = stderr
	if !filepath.IsAbs(*logFile) { // no home to put it in: never a path relative to where it runs
		*logFile = ""
	}
	if err := os.MkdirAll(filepath.Dir(*logFile), 0o700); *logFile != "" && err == nil {
		if f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			defer f.Close() // ignore error: an append-only log
			logw = f
		}
	}
	// The signal is the cause the windows are told (broker.Serve reads context.Cause).
	ctx, end := context.WithCancelCause(context.Background())
	defer end(nil)
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if *idle <= 0 {
		*idle = -1 // daemonIdleSeconds 0: the daemon exits once its last window left (broker.Options.Idle)
	}
	o := broker.Options{Dir: *dir, Build: version, Idle: *idle, Admit: daemonAdmit(policyPaths),
		Recheck: daemonPolicyChanges(ctx, policyPaths(), log), Log: log}
	if f := broker.ReadyFromEnv(); f != nil {
		o.Ready = f
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case sig := <-sigs:
			end(fmt.Errorf("by %s", sig))
		case <-ctx.Done():
		}
	}()
	if err := broker.Serve(ctx, o); err != nil {
		fmt.Fprintf(stderr, "switchboard daemon: %v\n", err)
		return 1
	}
	return 0
}

func runDaemonCtl(verb string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("daemon "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "socket `DIR` (default $XDG_RUNTIME_DIR/switchboard)")
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	cfg := broker.Config{Dir: *dir, Build: version}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := broker.GetStatus(ctx, cfg)
	if errors.Is(err, broker.ErrNotRunning) {
		if *asJSON && verb == "status" {
			fmt.Fprintln(stdout, "null") // JSON for "no daemon", so a program reading it never meets prose
			return 0
		}
		fmt.Fprintln(stdout, "No shared-server daemon is running.")
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "switchboard daemon %s: %v\n", verb, err)
		return 1
	}
	if verb == "restart" {
		if err := broker.Drain(ctx, cfg); err != nil {
			fmt.Fprintf(stderr, "switchboard daemon restart: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "The shared-server daemon (pid %d, Switchboard %s) hands over: the next window starts a new one; it exits when the windows using it have closed.\n", st.Pid, checkOneLine(st.Build, 80))
		return 0
	}
	if verb == "stop" {
		if err := broker.Stop(ctx, cfg); err != nil {
			fmt.Fprintf(stderr, "switchboard daemon stop: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Stopped the shared-server daemon (pid %d).\n", st.Pid)
		return 0
	}
	if *asJSON {
		b, _ := json.MarshalIndent(st, "", "  ") // ignore error: plain values
		fmt.Fprintln(stdout, string(jsonForTerminal(b)))
		return 0
	}
	fmt.Fprintf(stdout, "Shared-server daemon: pid %d, Switchboard %s (broker protocol %d.%d)\n", st.Pid, checkOneLine(st.Build, 80), st.Broker, st.Minor)
	if w := broker.SkewWarning(st.Build, version); w != "" {
		fmt.Fprintf(stdout, "  warning: %s\n", checkOneLine(w, 300))
	}
	if len(st.Instances) == 0 {
		fmt.Fprintln(stdout, "  no servers running")
	}
	for _, in := range st.Instances {
		windows := "1 window"
		if in.Windows != 1 {
			windows = fmt.Sprintf("%d windows", in.Windows)
		}
		fmt.Fprintf(stdout, "  %s  %s scope, %s, pid %d", checkOneLine(in.Name, 80), in.Scope, windows, in.ServerPid)
		if in.Display != "" {
			fmt.Fprintf(stdout, "  %s", checkOneLine(in.Display, 120))
		}
		fmt.Fprintln(stdout)
	}
	return 0
}

// daemonStart is broker.Config.Start for a window: this binary as `switchboard daemon` on the
// socket's directory, lingering idle after its last window.
func daemonStart(idle time.Duration) func(sock string) *exec.Cmd {
	return func(sock string) *exec.Cmd { return daemonCommand(sock, idle) }
}

// daemonCommand is host.Options.DaemonCommand: the daemon for sock, staying idle after its last
// window left (the window's daemonIdleSeconds).
func daemonCommand(sock string, idle time.Duration) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	// The daemon reads nothing from its environment (it gets none): its log's place is this
	// window's, and its working directory is no window's.
	cmd := exec.Command(exe, "daemon", "--dir", filepath.Dir(sock), "--idle", idle.String(),
		"--log", filepath.Join(permissions.StateDir(), "daemon.log"))
	cmd.Dir = "/"
	return cmd
}

// daemonAdmit is the daemon's own policy check (issue 33: a blocked server never starts from any
// source, the shared-server daemon included): before every attach, the organisation's policy is
// read afresh (so a change applies to the next start without a watcher) and asked about the
// launch exactly as the daemon would run it. A broken policy blocks everything, as in a window.
//
// The daemon knows the launch, not the window's entry: a bare serverCommand of an allowlist is
// found on the launch's own PATH (the child environment the window resolved), and a server from
// a managed-mcp.json is not known as such, so under an exclusive managed-mcp.json the daemon
// refuses every shared server and the windows run them themselves.
func daemonAdmit(paths func() policy.Paths) func(broker.Request) error {
	return func(req broker.Request) error {
		l := req.Launch
		path := ""
		for _, kv := range l.Env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				path = v
			}
		}
		pol := policy.Load(policy.Options{Paths: paths(), LookPath: func(name string) (string, error) { return lookPathIn(name, path) }})
		scope := policy.ScopeUser
		if l.Source == broker.SourceWorkspace {
			scope = policy.ScopeWorkspace
		}
		d := pol.Admit(policy.Launch{Name: req.Name, Scope: scope, Source: "the shared-server daemon", Transport: "stdio",
			Command: l.Command, Args: l.Args, Path: l.Command, CodeEnv: launchCodeEnv(l.Env), RunnerDir: launchRunnerDir(l)})
		if d.Allowed {
			return nil
		}
		if d.Rule != nil {
			return fmt.Errorf("%s (rule %s)", d.Message, d.Rule.Loc())
		}
		return errors.New(d.Message)
	}
}

// launchCodeEnv is host.CodeEnv of the variables in a launch's environment that the window did
// not take from its own (stdio.DefaultBaseEnv passes PATH, HOME, XDG_*, ... and nothing else):
// those the entry set. An entry's PATH or HOME cannot be told from the window's here; the
// window's own admission sees them.
func launchCodeEnv(env []string) []string {
	base := map[string]bool{}
	for _, kv := range mcpstdio.DefaultBaseEnv(env) {
		k, _, _ := strings.Cut(kv, "=")
		base[k] = true
	}
	own := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && !base[k] {
			own[k] = v
		}
	}
	return host.CodeEnv(own, func(string) (string, bool) { return "", false })
}

// launchRunnerDir is the folder a package-runner launch runs in, "" when it runs from / (the
// daemon's working directory when the launch names none).
func launchRunnerDir(l broker.Launch) string {
	c := config.ServerConfig{Transport: config.TransportStdio, Command: l.Command, Args: l.Args}
	if !mcpbridge.PackageRunner(c) || l.Dir == "" || l.Dir == string(filepath.Separator) {
		return ""
	}
	return l.Dir
}

// daemonPolicyChanges says when the organisation's policy files change, until ctx ends: the
// daemon then stops the shared servers the policy now blocks (broker.Options.Recheck). The
// watch starts before this returns, so a change from then on is seen.
func daemonPolicyChanges(ctx context.Context, paths policy.Paths, log *slog.Logger) <-chan struct{} {
	ch := make(chan struct{}, 1)
	w := policy.NewWatcher(policy.Options{Paths: paths})
	go func() {
		err := w.Run(ctx, func(*policy.Policy) {
			select {
			case ch <- struct{}{}:
			default: // one pending recheck asks the policy as it is by then
			}
		})
		if err != nil {
			log.Warn("switchboard daemon: policy changes will not stop running shared servers until restart", "err", err)
		}
	}()
	return ch
}

// lookPathIn finds name as exec.LookPath would with PATH set to path.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // never the daemon's working directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}
