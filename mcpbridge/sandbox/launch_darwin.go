package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// sandboxExec is macOS's sandbox runner (deprecated by Apple but shipped and used by, among
// others, Chromium's and Claude Code's sandboxes).
const sandboxExec = "/usr/bin/sandbox-exec"

// prepare runs cmd under sandbox-exec with a generated profile. A domain list is served by the
// host's proxy on a loopback port, the one address the profile lets the server reach. The
// profile is inherited by every descendant, as Landlock is.
func (s *Sandbox) prepare(cmd *exec.Cmd, _ string) error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return fmt.Errorf("sandbox: %s is missing, so the server was not started: %w", sandboxExec, err)
	}
	env := serverEnv(cmd.Env, s.plan)
	port := 0
	if s.plan.Network.Mode == NetDomains {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("sandbox: proxy: %w", err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		s.proxy = newProxy(s.plan.Network.Domains, s.opts.Dial, s.report)
		go s.proxy.serve(ln)
		env = proxyEnv(env, "http://127.0.0.1:"+strconv.Itoa(port))
	}
	profile, err := darwinProfile(s.plan, port)
	if err != nil {
		return err
	}
	args := []string{"sandbox-exec", "-p", profile, s.plan.Command}
	if len(cmd.Args) > 1 {
		args = append(args, cmd.Args[1:]...)
	}
	cmd.Path, cmd.Args, cmd.Env, cmd.Err = sandboxExec, args, env, nil
	return nil
}

// started has nothing to wait for: sandbox-exec applies the profile and execs, or exits non-zero
// saying why on stderr (the server's stderr tail shows it).
func (s *Sandbox) started() error { return nil }

// Main is the launcher entry; macOS needs none (sandbox-exec is the launcher).
func Main() {}

// Available reports whether sandbox-exec is there.
func Available() error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return errors.New("sandbox: " + sandboxExec + " is missing")
	}
	return nil
}

// darwinProfile writes the plan as a sandbox-exec (SBPL) profile: deny by default, then what the
// plan allows, then the always-denied paths again (later rules win in SBPL).
func darwinProfile(plan *Plan, proxyPort int) (string, error) {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork)\n")
	b.WriteString("(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n")
	b.WriteString("(allow file-read-metadata)\n")
	b.WriteString("(allow file-read* file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\"))\n")
	b.WriteString("(allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\") (literal \"/\"))\n")
	for _, p := range plan.Read {
		q, err := sbplString(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "(allow file-read* (subpath %s))\n", q)
	}
	for _, p := range plan.Write {
		q, err := sbplString(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "(allow file-read* file-write* (subpath %s))\n", q)
	}
	if err := darwinFixed(&b, plan); err != nil {
		return "", err
	}
	// The workspace's secrets (Plan.Secrets): denied, in any case of their names (macOS's file
	// system usually ignores case). After the allows and the fixed paths: later rules win.
	for _, f := range plan.Secrets {
		re, err := foldedPathRegex(f, nil)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "(deny file-read* file-write* (regex #\"%s\"))\n", re)
	}
	switch plan.Network.Mode {
	case NetAll:
		b.WriteString("(allow network*)\n")
	case NetDomains:
		fmt.Fprintf(&b, "(allow network-outbound (remote tcp \"localhost:%d\"))\n", proxyPort)
	}
	for _, d := range plan.Denied {
		q, err := sbplString(d)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "(deny file-read* file-write* (subpath %s))\n", q)
	}
	return b.String(), nil
}

// darwinFixed denies writes to the plan's Fixed paths (there or not: SBPL matches paths, so on
// macOS a server cannot create .envrc either), writes to its Anchors themselves (rename, remove;
// what is inside stays writable), and allows its Reopen folders again, shallowest first (later
// rules win). macOS's file system usually ignores case, so each fixed name is also denied in any
// case (.GIT/config is .git/config there).
func darwinFixed(b *strings.Builder, plan *Plan) error {
	type rule struct {
		path string
		sbpl string
	}
	var rules []rule
	for _, f := range plan.Fixed {
		q, err := sbplString(f)
		if err != nil {
			return err
		}
		re, err := foldedPathRegex(f, plan.Write)
		if err != nil {
			return err
		}
		rules = append(rules, rule{f, fmt.Sprintf("(deny file-write* (subpath %s) (regex #\"%s\"))\n", q, re)})
	}
	for _, a := range plan.Anchors {
		q, err := sbplString(a)
		if err != nil {
			return err
		}
		rules = append(rules, rule{a, fmt.Sprintf("(deny file-write* (literal %s))\n", q)})
	}
	for _, r := range plan.Reopen {
		q, err := sbplString(r)
		if err != nil {
			return err
		}
		rules = append(rules, rule{r, fmt.Sprintf("(allow file-read* file-write* (subpath %s))\n", q)})
	}
	depth := func(p string) int { return strings.Count(p, "/") }
	slices.SortStableFunc(rules, func(x, y rule) int { return depth(x.path) - depth(y.path) })
	for _, r := range rules {
		b.WriteString(r.sbpl)
	}
	return nil
}

// foldedPathRegex matches path and what lies inside it with the part below its write folder in
// any case: ^/Users/u/p/\.[gG][iI][tT]/[cC][oO][nN][fF][iI][gG](/|$).
func foldedPathRegex(path string, writes []string) (string, error) {
	root := ""
	for _, w := range writes {
		if within(path, w) && len(w) > len(root) && w != path {
			root = w
		}
	}
	if root == "" {
		root = filepath.Dir(path)
	}
	if strings.ContainsAny(path, "\"\\") {
		return "", fmt.Errorf("sandbox: a path with a quote or backslash cannot be kept read-only on macOS: %q", path)
	}
	var b strings.Builder
	b.WriteString("^" + regexp.QuoteMeta(root))
	for _, r := range path[len(root):] {
		lo, up := unicode.ToLower(r), unicode.ToUpper(r)
		if lo != up {
			b.WriteString("[" + string(lo) + string(up) + "]")
		} else {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("(/|$)")
	return b.String(), nil
}

// sbplString quotes s for SBPL; a path with a control character is refused, not escaped.
func sbplString(s string) (string, error) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("sandbox: a path with a control character: %q", s)
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`, nil
}
