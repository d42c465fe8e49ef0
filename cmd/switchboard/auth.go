package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// authEnv is the seam of `switchboard auth` tests: the token store and the browser.
type authEnv struct {
	store   tokenstore.Store
	where   string
	browser func(url string) error // nil = find one (xdg-open, open, $BROWSER)
}

var testAuthEnv *authEnv

// runAuth is `switchboard auth login|logout|status [SERVER]`.
func runAuth(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("auth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var configs, workspaces checkList
	fs.Var(&configs, "config", "read MCP servers from `FILE` too (repeatable)")
	fs.Var(&workspaces, "workspace", "workspace folder `DIR` whose MCP files are read too (default: the current directory)")
	noBrowser := fs.Bool("no-browser", false, "login: only print the sign-in URL")
	timeout := fs.Duration("timeout", oauth.DefaultSignInTimeout, "login: wait at most `D` for the browser")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchboard auth login SERVER | logout SERVER | status [SERVER]  [--config FILE]... [--workspace DIR] [--no-browser] [--timeout D]")
		fs.PrintDefaults()
	}
	if len(args) == 0 {
		fs.Usage()
		return 2
	}
	verb := args[0]
	var rest []string // flags may follow the server name
	for next := args[1:]; ; {
		if err := fs.Parse(next); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		next = fs.Args()[1:]
	}
	if verb != "login" && verb != "logout" && verb != "status" || len(rest) > 1 || (verb != "status" && len(rest) != 1) {
		fs.Usage()
		return 2
	}
	name := ""
	if len(rest) == 1 {
		name = rest[0]
	}
	if len(workspaces) == 0 {
		if wd, err := os.Getwd(); err == nil {
			workspaces = checkList{wd}
		}
	}
	if !namedConfigsExist("auth", configs, stderr) {
		return 2
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: workspaces, ExtraFiles: configs})
	for _, err := range errs {
		fmt.Fprintf(stderr, "switchboard auth: config: %s\n", safetext.Line(err.Error()))
	}
	var remote []config.ServerConfig
	for _, c := range cfgs {
		if c.Transport != config.TransportStdio && (name == "" || c.Name == name) {
			remote = append(remote, c)
		}
	}
	if name != "" && len(remote) == 0 {
		fmt.Fprintf(stderr, "switchboard auth: no http or sse MCP server named %q in the configuration\n", name)
		return 1
	}
	env := testAuthEnv
	if env == nil {
		s, where := tokenstore.Default(nil)
		env = &authEnv{store: s, where: where}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch verb {
	case "status":
		return authStatus(ctx, env, remote, stdout)
	case "logout":
		if err := mcpbridge.ForgetSignIn(ctx, env.store, remote[0]); err != nil {
			fmt.Fprintf(stderr, "switchboard auth: %s\n", safetext.Line(err.Error()))
			return 1
		}
		fmt.Fprintf(stdout, "signed out of %s (its tokens are deleted from %s)\n", safetext.Line(name), safetext.Line(env.where))
		return 0
	}
	return authLogin(ctx, env, remote[0], *noBrowser, *timeout, stdout, stderr)
}

func authStatus(ctx context.Context, env *authEnv, remote []config.ServerConfig, stdout io.Writer) int {
	fmt.Fprintf(stdout, "sign-ins are kept in %s\n", safetext.Line(env.where))
	if len(remote) == 0 {
		fmt.Fprintln(stdout, "no http or sse MCP servers configured")
	}
	for _, c := range remote {
		cred, err := env.store.Load(ctx, c.StateKey())
		var line string
		switch {
		case errors.Is(err, tokenstore.ErrNoCredential):
			line = "not signed in"
		case err != nil:
			line = "unknown: " + err.Error()
		default:
			line = "signed in at " + cred.Issuer
			if !cred.ExpiresAt.IsZero() {
				if d := time.Until(cred.ExpiresAt).Round(time.Second); d > 0 {
					line += fmt.Sprintf(", access expires in %s", d)
				} else {
					line += ", access expired"
				}
			}
			if cred.RefreshToken != "" {
				line += ", refreshable"
			}
			if u, _ := c.Resolve(nil); u.URL != "" && u.URL != cred.URL {
				line += " (for another URL: sign in again)"
			}
		}
		fmt.Fprintf(stdout, "%s\t%s\n", safetext.Line(c.Name), safetext.Line(line))
	}
	return 0
}

func authLogin(ctx context.Context, env *authEnv, cfg config.ServerConfig, noBrowser bool, timeout time.Duration, stdout, stderr io.Writer) int {
	cfg.WorkspaceOnly = false // naming it on the command line is the person's decision
	pol := policy.Load(policy.Options{Paths: policyPaths()})
	r := mcpbridge.NewRegistry(mcpbridge.Options{Tokens: env.store, PingInterval: -1,
		Admit: func(c config.ServerConfig) *mcpbridge.Blocked { return host.PolicyBlock(pol, c) }})
	defer r.Close()
	r.Apply(ctx, []config.ServerConfig{cfg})
	if err := r.WaitIdle(ctx); err != nil {
		return 1
	}
	open := func(_ context.Context, u string) error {
		fmt.Fprintf(stderr, "Open this page to sign in to %s:\n  %s\n", safetext.Line(cfg.Name), safetext.Line(u))
		if noBrowser {
			return nil
		}
		b := env.browser
		if b == nil {
			b = openBrowser
		}
		if err := b(u); err != nil {
			fmt.Fprintf(stderr, "(no browser opened: %s)\n", safetext.Line(err.Error()))
		}
		return nil
	}
	st, err := r.SignIn(ctx, cfg.Name, oauth.SignInOptions{Open: open, Timeout: timeout})
	if err != nil {
		fmt.Fprintf(stderr, "switchboard auth: %s\n", safetext.Line(strings.TrimPrefix(err.Error(), "mcpbridge: ")))
		return 1
	}
	fmt.Fprintf(stdout, "signed in to %s; the server is %s (%d tools); tokens kept in %s\n",
		safetext.Line(cfg.Name), st.State, st.Tools, safetext.Line(env.where))
	if st.State != mcpbridge.StateReady {
		return 1
	}
	return 0
}

// openBrowser hands url to the desktop's opener, when there is one.
func openBrowser(url string) error {
	var cands [][]string
	if b := os.Getenv("BROWSER"); b != "" {
		cands = append(cands, []string{b})
	}
	switch runtime.GOOS {
	case "darwin":
		cands = append(cands, []string{"open"})
	case "windows":
		cands = append(cands, []string{"rundll32", "url.dll,FileProtocolHandler"})
	default:
		cands = append(cands, []string{"xdg-open"}, []string{"wslview"})
	}
	for _, c := range cands {
		if p, err := exec.LookPath(c[0]); err == nil {
			cmd := exec.Command(p, append(c[1:], url)...)
			if err := cmd.Start(); err != nil {
				return err
			}
			go cmd.Wait() // ignore error: the opener's exit status says little
			return nil
		}
	}
	return errors.New("no browser opener found (xdg-open, open, $BROWSER)")
}
