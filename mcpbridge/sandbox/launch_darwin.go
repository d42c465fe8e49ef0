package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// sbplString quotes s for SBPL; a path with a control character is refused, not escaped.
func sbplString(s string) (string, error) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("sandbox: a path with a control character: %q", s)
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`, nil
}
