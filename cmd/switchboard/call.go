package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// callOptions are the parsed arguments of `switchboard call`.
type callOptions struct {
	name      string
	args      json.RawMessage
	mode      permissions.Mode
	configs   []string
	workspace string
}

func parseCallArgs(args []string) (callOptions, error) {
	var o callOptions
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		flagName, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return o, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch flagName {
		case "mode":
			m, err := permissions.ParseMode(val)
			if err != nil {
				return o, err
			}
			o.mode = m
		case "config":
			o.configs = append(o.configs, val)
		case "workspace":
			o.workspace = val
		default:
			return o, fmt.Errorf("unknown flag %s", a)
		}
	}
	switch len(pos) {
	case 1:
		o.args = json.RawMessage("{}")
	case 2:
		o.args = json.RawMessage(pos[1])
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(o.args, &obj); err != nil {
			return o, fmt.Errorf("JSON-ARGS must be a JSON object: %v", err)
		}
	default:
		return o, errors.New("want NAME [JSON-ARGS]")
	}
	o.name = pos[0]
	return o, nil
}

// runCall is `switchboard call NAME [JSON-ARGS] [--mode M] [--config FILE]... [--workspace DIR]`: one
// tool call through the same gate the editor uses. The question is asked on the terminal; when
// stdin is not a terminal the call is denied unless the mode or the allowlist allows it. The
// result text goes to stdout; the exit code is 1 when the result is an error (denials included).
const callUsage = `usage: switchboard call NAME [JSON-ARGS] [--mode M] [--config FILE]... [--workspace DIR]

Calls one tool (mcp__<server>__<tool> or a built-in) through the confirm gate and prints its result.
  --mode M          single-confirm (default: ask on the terminal), always-allow or allowlist-only
  --config FILE     read MCP servers from FILE too (repeatable)
  --workspace DIR   a workspace folder whose MCP files are read (workspace-only servers need trust)
Exit status: 0 ok, 1 the result is an error (a denial included), 2 bad usage.
`

func runCall(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stdout, callUsage)
			return 0
		}
	}
	o, err := parseCallArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard call: %v\n\n%s", err, callUsage)
		return 2
	}
	if !namedConfigsExist("call", o.configs, stderr) {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	var folders []string
	if o.workspace != "" {
		abs, err := filepath.Abs(o.workspace)
		if err != nil {
			fmt.Fprintf(stderr, "switchboard call: %v\n", err)
			return 2
		}
		folders = []string{abs}
	}
	cfgs, errs := mcpbridge.LoadConfig(mcpbridge.ConfigSources{WorkspaceFolders: folders, ExtraFiles: o.configs})
	for _, err := range errs {
		fmt.Fprintf(stderr, "switchboard call: config: %s\n", safetext.Line(err.Error())) // it quotes key and file names
	}
	// Only the tool's own server is started (built-in tools need none).
	if server, _, ok := mcpbridge.ParseToolName(o.name); ok {
		var keep []mcpbridge.ServerConfig
		for _, c := range cfgs {
			if c.Name == server {
				keep = append(keep, c)
			}
		}
		cfgs = keep
	} else {
		cfgs = nil
	}

	trust, err := permissions.OpenTrustStore(permissions.DefaultTrustPath())
	if err != nil {
		fmt.Fprintf(stderr, "switchboard call: %v\n", err)
		return 1
	}
	var term *terminal // questions to the user (confirm, elicitation) go to the terminal, if any
	if isTerminal(os.Stdin) {
		term = newTerminal(os.Stdin, stderr)
	}
	roots := folders
	if len(roots) == 0 {
		if wd, err := os.Getwd(); err == nil {
			roots = []string{wd} // servers that ask for roots work where the command runs
		}
	}
	reg := mcpbridge.NewRegistry(mcpbridge.Options{
		Logger:  log,
		Trusted: func(c mcpbridge.ServerConfig) bool { return trust.Get(c.Name, c.Fingerprint()) == permissions.Trusted },
		Roots:   func() []string { return roots },
		Elicit: func(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
			if term == nil {
				fmt.Fprintf(stderr, "switchboard call: server %s asked a question, but stdin is not a terminal: answered cancel\n", safetext.Line(e.Server))
				return mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
			}
			return term.elicit(ctx, e)
		},
	})
	defer reg.Close()
	reg.Apply(ctx, cfgs)
	reg.WaitIdle(ctx) // ignore error: a cancelled wait leaves the server starting; the call reports it
	for _, st := range reg.Servers() {
		switch st.State {
		case mcpbridge.StateFailed:
			fmt.Fprintf(stderr, "switchboard call: server %s failed: %s\n", safetext.Line(st.Name), safetext.Line(st.Error))
		case mcpbridge.StateUntrusted:
			fmt.Fprintf(stderr, "switchboard call: server %s comes only from a workspace file and is not trusted (trust it in the editor: switchboard.trust)\n", safetext.Line(st.Name))
		}
	}

	allow, err := permissions.OpenAllowlist(permissions.DefaultAllowlistPath())
	if err != nil {
		fmt.Fprintf(stderr, "switchboard call: %v\n", err)
		return 1
	}
	audit, err := permissions.OpenAuditLog(permissions.DefaultAuditPath(), 0)
	if err != nil {
		log.Warn("audit log unavailable", "err", err)
		audit = nil
	} else {
		defer audit.Close()
	}
	var prompter permissions.Prompter
	if term != nil {
		prompter = term
	}
	gate := permissions.NewGate(permissions.GateOptions{Allowlist: allow, Trust: trust, Prompter: prompter, Audit: audit, Logger: log})
	mgr := session.NewManager(session.Options{
		Tools: reg, Gate: gate, Workspace: &cliWorkspace{folders: folders},
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})), // no model here: its warnings are noise
		Warn:   func(msg string) { fmt.Fprintln(stderr, "switchboard call:", safetext.Line(msg)) },
	})
	defer mgr.Close()

	res, dec := mgr.CallTool(ctx, o.name, o.args, o.mode)
	if !dec.Allowed && dec.Reason != "" {
		fmt.Fprintf(stderr, "switchboard call: not allowed: %s\n", safetext.Line(dec.Reason))
	}
	text := safetext.Block(res.Text) // the server's words, to a terminal: lines and tabs kept, escapes shown
	fmt.Fprint(stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(stdout)
	}
	if res.IsError {
		return 1
	}
	return 0
}

// isTerminal reports whether f looks like a terminal: a character device other than the null
// device (portable without x/term; other character devices on stdin are rare).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// cliWorkspace is session.Workspace without an editor: no open buffers, edits written to disk.
type cliWorkspace struct{ folders []string }

func (w *cliWorkspace) Folders() []string                 { return w.folders }
func (w *cliWorkspace) Buffer(path string) (string, bool) { return "", false }
func (w *cliWorkspace) ApplyEdit(ctx context.Context, path, newText string) (bool, error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.WriteFile(path, []byte(newText), mode); err != nil {
		return false, err
	}
	return true, nil
}
