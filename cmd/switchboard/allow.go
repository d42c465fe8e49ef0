package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

const allowUsage = `usage:
  switchboard allow list [--file F] [--json]
      print the allowlist file's path and its entries
  switchboard allow set PREFIX [ENTRY...] [--file F] [--workspace DIR]... [--json]
      replace the entries of one server (PREFIX is mcp__<server>__) with ENTRY...; every ENTRY
      is an entry of that server: mcp__<server>__<tool>, mcp__<server>__<tool prefix>*, or
      PREFIX* (the whole server); no ENTRY revokes every grant of the server. Entries of other
      servers are kept, even when their names start alike. Prints the whole list after the change.
      For a server defined only in a workspace file of DIR (default: the current directory) and
      trusted, the entries are granted to its current definition, as answering "always" does;
      a changed definition does not inherit them.

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
	var pos, workspaces []string
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
		case a == "--workspace" || a == "-workspace":
			if i+1 >= len(rest) || rest[i+1] == "" {
				return fail(2, "%s needs a directory", a)
			}
			i++
			workspaces = append(workspaces, rest[i])
		case strings.HasPrefix(a, "--workspace=") || strings.HasPrefix(a, "-workspace="):
			dir := a[strings.IndexByte(a, '=')+1:]
			if dir == "" {
				return fail(2, "--workspace needs a directory")
			}
			workspaces = append(workspaces, dir)
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
		if len(workspaces) != 0 {
			return fail(2, "list takes no --workspace (it is for set)")
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
		if err := bindWorkspaceGrants(pos[0], al.Entries(), workspaces, stderr); err != nil {
			return fail(1, "%v", err)
		}
	default:
		return fail(2, "unknown subcommand %q (want list or set)\n\n%s", sub, allowUsage)
	}
	printAllowlist(stdout, al.Path(), al.Entries(), jsonOut)
	return 0
}

// bindWorkspaceGrants records the entries under prefix for the current definition of a server
// defined only in a workspace file of the folders (default: the current directory) and trusted,
// as the host's switchboard.allowlist.set does (permissions.TrustStore.SetGrants): the gate counts
// a workspace server's entries only for the definition they were granted to. For an untrusted one
// it says on stderr that the entries do not count for it.
func bindWorkspaceGrants(prefix string, entries, folders []string, stderr io.Writer) error {
	if len(folders) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil // no workspace to look in: a user-level server needs no binding
		}
		folders = []string{wd}
	}
	for i, f := range folders {
		if abs, err := filepath.Abs(f); err == nil {
			folders[i] = abs
		}
	}
	server := strings.TrimSuffix(strings.TrimPrefix(prefix, "mcp__"), "__")
	cfgs, _ := config.LoadConfig(config.ConfigSources{WorkspaceFolders: folders}) // problems are check's to report
	i := slices.IndexFunc(cfgs, func(c config.ServerConfig) bool { return c.Name == server && c.WorkspaceOnly })
	if i < 0 {
		return nil
	}
	cfg := cfgs[i]
	trust, err := permissions.OpenTrustStore(permissions.DefaultTrustPath())
	if err != nil {
		return err
	}
	if trust.Get(server, cfg.Fingerprint()) != permissions.Trusted {
		fmt.Fprintf(stderr, "switchboard allow: server %s comes only from workspace file %s and is not trusted, so these entries do not count for it; trust it in the editor (switchboard.trust), then set them again.\n",
			safetext.Line(server), safetext.Line(cfg.Source))
		return nil
	}
	if err := trust.SetGrants(server, cfg.Fingerprint(), entries); err != nil {
		return fmt.Errorf("the entries were written to the allowlist but could not be granted to the workspace definition of server %s, so they do not count for it: %w", server, err)
	}
	return nil
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
