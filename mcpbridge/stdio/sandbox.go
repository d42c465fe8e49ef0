package stdio

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
)

// Sandbox is how a child is confined: the entry's profile and what the registry knows of the
// machine (home, workspace folders, the server's own folder, Switchboard's state). Start fills in
// the command line.
type Sandbox struct {
	Profile sandbox.Profile
	Env     sandbox.Env
	// Options are the sandbox's (the proxy's dialer, the launcher); Report is set by Start, which
	// puts every refusal into the stderr tail and Blocked.
	Options sandbox.Options
	// OnBlocked, when set, is told each refusal's sentence (the registry: a status changed).
	OnBlocked func(sentence string)
}

// maxBlocked is how many recent refusals Blocked keeps.
const maxBlocked = 5

// Blocked returns the sandbox's latest refusals, oldest first, as plain sentences.
func (t *Transport) Blocked() []string {
	t.blockedMu.Lock()
	defer t.blockedMu.Unlock()
	return slices.Clone(t.blocked)
}

func (t *Transport) noteBlocked(s string) {
	t.stderr.Write([]byte("switchboard: " + s + "\n")) // ignore error: the ring takes everything
	t.blockedMu.Lock()
	t.blocked = append(t.blocked, s)
	if len(t.blocked) > maxBlocked {
		t.blocked = slices.Delete(t.blocked, 0, len(t.blocked)-maxBlocked)
	}
	t.blockedMu.Unlock()
	if t.Sandbox.OnBlocked != nil {
		t.Sandbox.OnBlocked(s)
	}
}

// confine resolves the profile for this command line and wraps cmd in the launcher.
func (t *Transport) confine(cmd *exec.Cmd) error {
	env := t.Sandbox.Env
	env.Command, env.Args, env.Dir = t.command, t.args, t.dir
	env.Path = lookupEnv(t.env, "PATH") // the child's PATH finds its command, as exec would
	plan, err := sandbox.Resolve(t.Sandbox.Profile, env)
	if err != nil {
		return err
	}
	opts := t.Sandbox.Options
	report := opts.Report
	opts.Report = func(s string) {
		t.noteBlocked(s)
		if report != nil {
			report(s)
		}
	}
	box, err := sandbox.Wrap(cmd, plan, opts)
	if err != nil {
		return err
	}
	t.box, t.plan = box, plan
	return nil
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// explainer passes the child's stderr through and, after each line that reports a refusal the
// sandbox caused, adds the plain sentence ("blocked: read of ~/.ssh/id_rsa ...").
type explainer struct {
	mu      sync.Mutex
	to      *ring
	note    func(string)
	plan    *sandbox.Plan
	partial []byte // the current line so far (bounded)
}

func (e *explainer) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(p)
	e.to.Write(p) // ignore error: the ring takes everything
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(e.partial) < 4<<10 {
				e.partial = append(e.partial, p[:min(len(p), 4<<10-len(e.partial))]...)
			}
			break
		}
		line := append(e.partial, p[:i]...)
		e.partial = e.partial[:0]
		p = p[i+1:]
		if s, ok := e.plan.Explain(string(line)); ok {
			e.note(s)
		}
	}
	return n, nil
}
