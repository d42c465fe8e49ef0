package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

const mcpInputUsage = `usage:
  switchboard mcp input set ID [--file F] [--workspace DIR]
  switchboard mcp input delete ID [--file F] [--workspace DIR]

Sets (or forgets) the value of a config file's ${input:ID} (VS Code's "inputs"), for editors that
cannot ask for it. The value is read from the terminal without echo, or from stdin, and kept in
the system keychain (or, without one, the 0600 file of OAuth sign-ins), never in the config file.
Without --file, the file is the one among your user mcp.json and the workspace's (.vscode/mcp.json,
.mcp.json, .switchboard/mcp.json in --workspace, default: the current directory) that declares ID.
A running Switchboard uses it when the server is reconnected.
`

// openInputStore is the store of input values (tests replace it).
var openInputStore = func() (tokenstore.Store, string) { return tokenstore.Default(nil) }

// runMCPInput implements `switchboard mcp input`.
func runMCPInput(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "switchboard mcp input: %s\n", safetext.Line(fmt.Sprintf(format, a...)))
		return code
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, mcpInputUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	fset := flag.NewFlagSet("mcp input", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	file := fset.String("file", "", "")
	ws := fset.String("workspace", "", "")
	var pos []string
	rest := args[1:]
	for len(rest) > 0 {
		if err := fset.Parse(rest); err != nil {
			return fail(2, "%v (see switchboard mcp input help)", err)
		}
		rest = fset.Args()
		if len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	if sub != "set" && sub != "delete" {
		return fail(2, "unknown subcommand %q (want set or delete)", sub)
	}
	if len(pos) != 1 {
		return fail(2, "%s takes one ID", sub)
	}
	id := pos[0]
	in, err := findInput(id, *file, *ws)
	if err != nil {
		return fail(1, "%v", err)
	}
	store, where := openInputStore()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if sub == "delete" {
		if err := config.DeleteInput(ctx, store, in.Key); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "Forgot input %s of %s.\n", safetext.Line(id), safetext.Line(in.File))
		return 0
	}
	label := id
	if in.Description != "" {
		label += " (" + in.Description + ")"
	}
	v, err := readSecret(stdin, stderr, "Value of input "+safetext.Line(label)+": ")
	if err != nil {
		return fail(1, "%v", err)
	}
	if in.Type == config.InputPickString && !slices.Contains(in.Options, v) {
		return fail(2, "input %s is a pickString: the value must be one of %s", id, strings.Join(in.Options, ", "))
	}
	if err := config.SaveInput(ctx, store, in.Key, v); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "Kept input %s of %s in %s. Reconnect the server to use it.\n", safetext.Line(id), safetext.Line(in.File), safetext.Line(where))
	return 0
}

// findInput is the declaration of id: in file, else in the one config file that declares it.
func findInput(id, file, ws string) (config.Input, error) {
	var files []string
	if file != "" {
		files = []string{file}
	} else {
		if ws == "" {
			ws, _ = os.Getwd() // ignore error: then only the user file
		}
		var folders []string
		if ws != "" {
			folders = []string{ws}
		}
		files = config.ConfigFiles("", folders, nil)
	}
	var found []config.Input
	for _, f := range files {
		ins, err := config.FileInputs(f)
		if errors.Is(err, fs.ErrNotExist) && file == "" {
			continue
		}
		if err != nil {
			return config.Input{}, err
		}
		if in, ok := ins[id]; ok {
			found = append(found, in)
		}
	}
	switch len(found) {
	case 0:
		return config.Input{}, fmt.Errorf("no input %q declared in %s", id, strings.Join(files, ", "))
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, in := range found {
		names[i] = in.File
	}
	return config.Input{}, fmt.Errorf("input %q is declared in %s: say which with --file", id, strings.Join(names, " and "))
}

// readSecret reads one value: from the terminal without echo when stdin is one, else all of
// stdin (one trailing newline dropped).
func readSecret(stdin io.Reader, stderr io.Writer, prompt string) (string, error) {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprint(stderr, prompt)
			echo := setEcho(f, false)
			line, err := bufio.NewReader(f).ReadString('\n')
			if echo {
				setEcho(f, true)
			}
			fmt.Fprintln(stderr)
			if err != nil && line == "" {
				return "", fmt.Errorf("no value read: %v", err)
			}
			return strings.TrimRight(line, "\r\n"), nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// setEcho turns the terminal's echo on or off with stty (no cgo, no dependency); false when it
// could not (Windows: the value then shows as typed).
func setEcho(tty *os.File, on bool) bool {
	arg := "-echo"
	if on {
		arg = "echo"
	}
	stty, err := exec.LookPath("stty")
	if err != nil {
		return false
	}
	cmd := exec.Command(stty, arg)
	cmd.Stdin = tty
	return cmd.Run() == nil
}

// inputLookup is os.LookupEnv that also answers the values of config files' inputs
// (config.InputVar names) from the store, opened on first use: `switchboard check` starts a
// server with the input values kept by the editor or `switchboard mcp input set`.
func inputLookup() func(string) (string, bool) { return inputLookupIn(&lazyStore{}) }

// inputLookupIn is inputLookup reading the input values from store.
func inputLookupIn(store tokenstore.Store) func(string) (string, bool) {
	return func(name string) (string, bool) {
		key, ok := config.InputKeyOfVar(name)
		if !ok {
			return os.LookupEnv(name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := config.LoadInput(ctx, store, key)
		return v, err == nil
	}
}

// lazyStore is the store of sign-ins and input values (openInputStore), opened on first use: a
// command none of whose servers signs in or names an input never probes the keychain.
type lazyStore struct {
	once  sync.Once
	store tokenstore.Store
}

func (l *lazyStore) open() tokenstore.Store {
	l.once.Do(func() { l.store, _ = openInputStore() })
	return l.store
}

func (l *lazyStore) Load(ctx context.Context, server string) (tokenstore.Credential, error) {
	return l.open().Load(ctx, server)
}

func (l *lazyStore) Save(ctx context.Context, server string, c tokenstore.Credential) error {
	return l.open().Save(ctx, server, c)
}

func (l *lazyStore) Delete(ctx context.Context, server string) error {
	return l.open().Delete(ctx, server)
}
