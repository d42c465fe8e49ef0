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

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// `switchboard resources [SERVER]`, `read URI`, `prompts [SERVER]`, `prompt NAME [ARGS-JSON]`: MCP
// resources and prompts on the terminal, through the same application as the editor. Everything a
// server sent is escaped before it is printed.

const resourcesUsage = `usage: switchboard resources [SERVER] [--config FILE]... [--workspace DIR]
       switchboard read URI [--server S] [--config FILE]... [--workspace DIR]
       switchboard prompts [SERVER] [--config FILE]... [--workspace DIR]
       switchboard prompt NAME [ARGS-JSON] [--server S] [--config FILE]... [--workspace DIR]

resources lists the resources and resource templates of every server (or of SERVER); read prints
a resource's text (capped like a tool result); prompts lists the servers' prompts; prompt runs one
(ARGS-JSON is an object of string arguments) and prints its messages.
  --server S        the server (when more than one offers URI or NAME)
  --config FILE     read MCP servers from FILE too (repeatable)
  --workspace DIR   a workspace folder whose MCP files are read (workspace-only servers need trust)
Exit status: 0 ok, 1 the server failed or refused, 2 bad usage.
`

// resourceOptions are the parsed arguments of the four commands.
type resourceOptions struct {
	pos       []string
	server    string
	configs   []string
	workspace string
}

func parseResourceArgs(args []string) (resourceOptions, error) {
	var o resourceOptions
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			o.pos = append(o.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasVal {
			if i+1 >= len(args) {
				return o, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch name {
		case "server":
			o.server = val
		case "config":
			o.configs = append(o.configs, val)
		case "workspace":
			o.workspace = val
		default:
			return o, fmt.Errorf("unknown flag %s", a)
		}
	}
	return o, nil
}

func runResources(args []string, stdout, stderr io.Writer) int {
	return resourceCommand("resources", 0, 1, args, stdout, stderr, listResources)
}

func runRead(args []string, stdout, stderr io.Writer) int {
	return resourceCommand("read", 1, 1, args, stdout, stderr, readResource)
}

func runPrompts(args []string, stdout, stderr io.Writer) int {
	return resourceCommand("prompts", 0, 1, args, stdout, stderr, listPrompts)
}

func runPrompt(args []string, stdout, stderr io.Writer) int {
	return resourceCommand("prompt", 1, 2, args, stdout, stderr, getPrompt)
}

// resourceCommand parses args (between lo and hi positional arguments), starts the servers (only
// the one named, when one is) and runs fn.
func resourceCommand(cmd string, lo, hi int, args []string, stdout, stderr io.Writer,
	fn func(ctx context.Context, app *host.App, o resourceOptions, stdout io.Writer) error) int {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stdout, resourcesUsage)
			return 0
		}
	}
	o, err := parseResourceArgs(args)
	if err == nil && (len(o.pos) < lo || len(o.pos) > hi) {
		err = errors.New("wrong number of arguments")
	}
	if err != nil {
		fmt.Fprintf(stderr, "switchboard %s: %v\n\n%s", cmd, err, resourcesUsage)
		return 2
	}
	if !namedConfigsExist(cmd, o.configs, stderr) {
		return 2
	}
	only := o.server
	if (cmd == "resources" || cmd == "prompts") && len(o.pos) == 1 {
		only = o.pos[0]
		o.server = only
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var folders []string
	if o.workspace != "" {
		abs, err := filepath.Abs(o.workspace)
		if err != nil {
			fmt.Fprintf(stderr, "switchboard %s: %v\n", cmd, err)
			return 2
		}
		folders = []string{abs}
	}
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		roots = []string{wd}
	}
	ui := &resourceUI{terminalUI: &terminalUI{stderr: stderr}, cmd: cmd}
	app, err := host.New(host.Options{
		Policy: policyPaths(),
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Roots:  roots,
		Servers: func(cfgs []config.ServerConfig) []config.ServerConfig {
			if only == "" {
				return cfgs
			}
			var keep []config.ServerConfig
			for _, c := range cfgs {
				if c.Name == only {
					keep = append(keep, c)
				}
			}
			return keep
		},
	}, ui)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard %s: %v\n", cmd, err)
		return 1
	}
	defer app.Close()
	app.StartAndWait(ctx, folders, host.Settings{ConfigFiles: o.configs})
	if err := fn(ctx, app, o, stdout); err != nil {
		fmt.Fprintf(stderr, "switchboard %s: %s\n", cmd, safetext.Line(err.Error()))
		var re *host.RequestError
		if errors.As(err, &re) && strings.HasPrefix(re.Msg, "unknown server") {
			return 2
		}
		return 1
	}
	return 0
}

func listResources(ctx context.Context, app *host.App, o resourceOptions, w io.Writer) error {
	rs, ts, err := app.Resources(ctx, o.server)
	if err != nil {
		return err
	}
	for _, r := range rs { // names and descriptions are escaped by the application
		fmt.Fprintf(w, "%s\t%s\t%s%s\n", safetext.Line(r.Server), safetext.Line(r.URI), r.Name, describe(r.Description))
	}
	for _, t := range ts {
		fmt.Fprintf(w, "%s\t%s\t%s (template)%s\n", safetext.Line(t.Server), safetext.Line(t.URITemplate), t.Name, describe(t.Description))
	}
	if len(rs)+len(ts) == 0 {
		fmt.Fprintln(w, "no resources")
	}
	return nil
}

// describe is ": description" on one line (first line, bounded), or "".
func describe(d string) string {
	first, _, _ := strings.Cut(d, "\n")
	if first == "" {
		return ""
	}
	return ": " + safetext.Bounded(first, 120)
}

func readResource(ctx context.Context, app *host.App, o resourceOptions, w io.Writer) error {
	res, err := app.ReadResource(ctx, o.server, o.pos[0], false)
	if err != nil {
		return err
	}
	for _, c := range res.Contents {
		if c.Blob != "" {
			fmt.Fprintf(w, "[binary content %s, %d bytes of base64]\n", safetext.Line(c.MIMEType), c.Bytes)
			continue
		}
		text := safetext.Block(c.Text)
		fmt.Fprint(w, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}

func listPrompts(ctx context.Context, app *host.App, o resourceOptions, w io.Writer) error {
	ps, err := app.Prompts(ctx, o.server)
	if err != nil {
		return err
	}
	for _, p := range ps {
		args := make([]string, len(p.Arguments))
		for i, a := range p.Arguments {
			args[i] = a.Name
			if a.Required {
				args[i] += "*"
			}
		}
		fmt.Fprintf(w, "%s\t%s(%s)%s\n", safetext.Line(p.Server), p.Name, strings.Join(args, ", "), describe(p.Description))
	}
	if len(ps) == 0 {
		fmt.Fprintln(w, "no prompts")
	}
	return nil
}

func getPrompt(ctx context.Context, app *host.App, o resourceOptions, w io.Writer) error {
	name := o.pos[0]
	args := map[string]string{}
	if len(o.pos) == 2 {
		if err := json.Unmarshal([]byte(o.pos[1]), &args); err != nil {
			return &host.RequestError{Msg: "ARGS-JSON must be a JSON object of strings: " + err.Error()}
		}
	}
	ps, err := app.Prompts(ctx, o.server)
	if err != nil {
		return err
	}
	var found []mcpbridge.Prompt
	for _, p := range ps {
		if p.Name == name {
			found = append(found, p)
		}
	}
	server := o.server
	switch {
	case len(found) > 1 && server == "":
		var names []string
		for _, p := range found {
			names = append(names, p.Server)
		}
		return fmt.Errorf("servers %s all offer %s: say which with --server", strings.Join(names, ", "), name)
	case len(found) == 0 && server == "":
		return fmt.Errorf("no server offers a prompt %s", name)
	case len(found) > 0:
		server = found[0].Server
		// The prompt's required arguments are asked for here, by name: the server's answer
		// to a call without one is its own error ("internal error: topic is required").
		var missing []string
		for _, a := range found[0].Arguments {
			if _, ok := args[a.Name]; a.Required && !ok {
				missing = append(missing, a.Name)
			}
		}
		if len(missing) > 0 {
			example := map[string]string{}
			for _, a := range missing {
				example[a] = "..."
			}
			b, _ := json.Marshal(example) // ignore error: strings
			return fmt.Errorf("prompt %s needs the argument %s: switchboard prompt %s '%s'", name, strings.Join(missing, ", "), name, b)
		}
	}
	res, err := app.GetPrompt(ctx, server, name, args)
	if err != nil {
		return err
	}
	for _, m := range res.Messages {
		text := safetext.Block(m.Text)
		fmt.Fprintf(w, "%s: %s", m.Role, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// resourceUI is the terminal UI (no questions can be answered: stdin is not read) naming the
// command in its notices.
type resourceUI struct {
	*terminalUI
	cmd string
}

func (u *resourceUI) Notify(_ host.Level, msg string) {
	fmt.Fprintf(u.stderr, "switchboard %s: %s\n", u.cmd, safetext.Line(msg))
}
