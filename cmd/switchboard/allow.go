package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-dev/switchboard/permissions"
)

const allowUsage = `usage:
  switchboard allow list [--file F] [--json]
      print the allowlist file's path and its entries
  switchboard allow set PREFIX [ENTRY...] [--file F] [--json]
      replace the entries of one server (PREFIX is mcp__<server>__) with ENTRY...; every ENTRY
      is an entry of that server: mcp__<server>__<tool>, mcp__<server>__<tool prefix>*, or
      PREFIX* (the whole server); no ENTRY revokes every grant of the server. Entries of other
      servers are kept, even when their names start alike. Prints the whole list after the change.

The default file is $XDG_CONFIG_HOME/switchboard/allow_tool (~/.config/switchboard/allow_tool).
Exit status: 0 ok, 1 the file is malformed or cannot be read or written, 2 invalid input.
`

// runAllow implements `switchboard allow`.
func runAllow(args []string, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "switchboard allow: "+format+"\n", a...)
		return code
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, allowUsage)
		return 2
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, allowUsage)
		return 0
	}
	file := permissions.DefaultAllowlistPath()
	jsonOut := false
	var pos []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			pos = append(pos, rest[i+1:]...)
			i = len(rest)
		case a == "--file" || a == "-file" || a == "-f":
			if i+1 >= len(rest) || rest[i+1] == "" {
				return fail(2, "%s needs a file name", a)
			}
			i++
			file = rest[i]
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "-file="):
			file = a[strings.IndexByte(a, '=')+1:]
			if file == "" {
				return fail(2, "--file needs a file name")
			}
		case a == "--json" || a == "-json":
			jsonOut = true
		case a == "-h" || a == "--help":
			fmt.Fprint(stdout, allowUsage)
			return 0
		case strings.HasPrefix(a, "-"):
			return fail(2, "unknown flag %s\n\n%s", a, allowUsage)
		default:
			pos = append(pos, a)
		}
	}

	al, err := permissions.OpenAllowlist(file)
	if err != nil {
		return fail(1, "%v", err)
	}
	switch sub {
	case "list":
		if len(pos) != 0 {
			return fail(2, "list takes no arguments (got %q)", pos)
		}
		if err := al.Err(); err != nil {
			return fail(1, "%v", err)
		}
	case "set":
		if len(pos) == 0 {
			return fail(2, "set needs a PREFIX (mcp__<server>__)\n\n%s", allowUsage)
		}
		if _, err := al.Replace(pos[0], pos[1:]); err != nil {
			if ie := (*permissions.InputError)(nil); errors.As(err, &ie) {
				return fail(2, "%v", err)
			}
			return fail(1, "%v", err)
		}
	default:
		return fail(2, "unknown subcommand %q (want list or set)\n\n%s", sub, allowUsage)
	}
	printAllowlist(stdout, al.Path(), al.Entries(), jsonOut)
	return 0
}

// printAllowlist prints the path as a comment line followed by the entries, so the output is
// itself a valid allowlist file; with --json it prints {"path", "entries"} like
// switchboard.allowlist.get.
func printAllowlist(w io.Writer, path string, entries []string, jsonOut bool) {
	if jsonOut {
		if entries == nil {
			entries = []string{}
		}
		b, _ := json.MarshalIndent(struct {
			Path    string   `json:"path"`
			Entries []string `json:"entries"`
		}{path, entries}, "", "  ")
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "# %s\n", path)
	if len(entries) == 0 {
		fmt.Fprintln(w, "# (no entries)")
	}
	for _, e := range entries {
		fmt.Fprintln(w, e)
	}
}
