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
	"slices"
	"strings"
	"syscall"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
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

	var folders []string
	if o.workspace != "" {
		abs, err := filepath.Abs(o.workspace)
		if err != nil {
			fmt.Fprintf(stderr, "switchboard call: %v\n", err)
			return 2
		}
		folders = []string{abs}
	}
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		roots = []string{wd} // without --workspace, servers that ask for roots work where the command runs
	}
	ui := &terminalUI{stderr: stderr}
	if isTerminal(os.Stdin) {
		ui.term = newTerminal(os.Stdin, stderr) // questions to the user go to the terminal, if any
	}
	app, err := host.New(host.Options{
		Policy: policyPaths(),
		// Notices reach the person through ui.Notify; the log adds only errors (as the session's did).
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Roots:  roots,
		// A shared server a window runs is used warm; no daemon or instance is started for a
		// one-shot call.
		Broker: &broker.Config{Build: version, Existing: true},
		// Only the tool's own server is started (built-in tools need none).
		Servers: func(cfgs []config.ServerConfig) []config.ServerConfig {
			server, _, ok := mcpbridge.ParseToolName(o.name)
			var keep []config.ServerConfig
			for _, c := range cfgs {
				if ok && c.Name == server {
					keep = append(keep, c)
				}
			}
			return keep
		},
	}, ui)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard call: %v\n", err)
		return 1
	}
	defer app.Close()
	app.StartAndWait(ctx, folders, host.Settings{ConfigFiles: o.configs, Mode: o.mode})
	for _, st := range app.Servers() { // failures were told by ui.Notify
		if st.State == mcpbridge.StateUntrusted {
			fmt.Fprintf(stderr, "switchboard call: server %s comes only from a workspace file and is not trusted (trust it in the editor: switchboard.trust)\n", safetext.Line(st.Name))
		}
	}

	// A call that runs as an MCP task shows its line on stderr (tasks.go); Ctrl-C cancels it.
	progress := &callProgress{w: stderr, term: stderr == io.Writer(os.Stderr) && isTerminal(os.Stderr)}
	res, dec := app.CallTool(ctx, host.CallRequest{Name: o.name, Arguments: o.args, Source: "call", Progress: progress})
	if summary := app.Summary(o.name, res, dec); summary != "" {
		// A person reads this: one sentence saying what happened and what to do, not the text
		// written for the model ({"error": ...}, "do not retry").
		fmt.Fprintf(stderr, "switchboard call: %s\n", summary)
		if o.workspace == "" {
			if hint := workspaceOnlyHint(o.name, app.Servers()); hint != "" {
				fmt.Fprintf(stderr, "switchboard call: %s\n", hint)
			}
		}
		if dec.By == permissions.ByDisconnect && ui.term == nil {
			fmt.Fprintln(stderr, "switchboard call: stdin is not a terminal, so the confirm gate could not ask you; run it in a terminal, or grant the tool first (switchboard allow set).")
		}
		return 1
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

// workspaceOnlyHint is what to do when the tool's server is not configured but a workspace file
// of the current directory defines it: call reads a folder's MCP files only with --workspace
// (check reads the current directory's by default, so it lists the server there).
func workspaceOnlyHint(tool string, running []mcpbridge.ServerStatus) string {
	server, _, ok := mcpbridge.ParseToolName(tool)
	if !ok || slices.ContainsFunc(running, func(s mcpbridge.ServerStatus) bool { return s.Name == server }) {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{wd}})
	source := ""
	for _, c := range cfgs {
		if c.Name == server && c.WorkspaceOnly {
			source = c.Source
		}
	}
	for _, err := range errs {
		if ce := (*config.ConfigError)(nil); errors.As(err, &ce) && ce.Server == server && source == "" {
			source = ce.File
		}
	}
	if source == "" {
		return ""
	}
	if rel, err := filepath.Rel(wd, source); err == nil && filepath.IsLocal(rel) {
		source = rel
	}
	return fmt.Sprintf("%s in this folder defines %s: add --workspace . to use this folder's servers (one a workspace file defines runs once you trusted it in the editor).",
		safetext.Line(source), safetext.Line(server))
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

// terminalUI is host.UI on the terminal: questions are asked there one at a time (terminal), or,
// when stdin is not a terminal, nobody can answer them. Notices go to stderr; edits are written to
// disk (there are no open buffers).
type terminalUI struct {
	term   *terminal // nil: stdin is not a terminal
	stderr io.Writer
}

var _ host.UI = (*terminalUI)(nil)

// Ask is host.UI.
func (u *terminalUI) Ask(q *host.Question) {
	switch q.Kind {
	case host.KindApproval, host.KindElicitation:
	case host.KindSampling:
		fmt.Fprintf(u.stderr, "switchboard call: server %s asked to use the model: refused (switchboard call lends no model)\n", safetext.Line(q.Sample.Server))
		q.Dismiss()
		return
	case host.KindPin: // reviewed with `switchboard pins diff|accept`; the changed tools stay held
		fmt.Fprintf(u.stderr, "switchboard call: %s Review it with: switchboard pins diff %s\n", q.Text, safetext.Line(q.Pins.Server))
	case host.KindInput:
		fmt.Fprintf(u.stderr, "switchboard call: server %s needs input '%s': set it with `switchboard mcp input set %s --file %s`\n",
			safetext.Line(q.Server.Name), q.Input.ID, q.Input.ID, safetext.Line(q.Input.File))
		q.Dismiss()
		return
	default: // trust is decided in the editor (switchboard.trust)
		q.Dismiss()
		return
	}
	if u.term == nil {
		if q.Kind == host.KindElicitation {
			fmt.Fprintf(u.stderr, "switchboard call: server %s asked a question, but stdin is not a terminal: answered cancel\n", safetext.Line(q.Elicitation.Server))
		}
		q.Gone() // nobody can answer
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		<-q.Done()
		stop()
	}()
	go func() {
		defer stop()
		if q.Kind == host.KindElicitation {
			q.Answer(host.Reply{Elicit: u.term.elicit(ctx, q.Elicitation)}) // ignore error: ended another way first
			return
		}
		ans, err := u.term.Confirm(ctx, q.Approval)
		switch {
		case err == nil:
			q.Answer(host.Reply{Decision: ans}) // ignore error: timed out first
		case ctx.Err() == nil:
			q.Gone() // end of input: nobody answered
		}
	}()
}

func (u *terminalUI) Resolved(*host.Question)                 {}
func (u *terminalUI) ServersChanged([]mcpbridge.ServerStatus) {}
func (u *terminalUI) ServersStarting()                        {}
func (u *terminalUI) ToolProgress() host.ToolProgress         { return nil }
func (u *terminalUI) ChatEvent(host.ChatEvent)                {} // call runs no chat turn
func (u *terminalUI) Buffer(path string) (string, bool)       { return "", false }
func (u *terminalUI) Notify(_ host.Level, msg string) {
	fmt.Fprintln(u.stderr, "switchboard call:", safetext.Line(msg))
}

// ApplyEdit writes the file (edit_file without an editor).
func (u *terminalUI) ApplyEdit(ctx context.Context, path, newText string) (bool, error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.WriteFile(path, []byte(newText), mode); err != nil {
		return false, err
	}
	return true, nil
}
