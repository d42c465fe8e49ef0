package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// envPlan carries the plan from the host to the launcher (the host's own executable re-invoked,
// which calls Main first thing). The launcher removes it before the server starts.
const envPlan = "_SWITCHBOARD_SANDBOX_PLAN"

// exitLaunch is the launcher's exit status when it refused to start the server.
const exitLaunch = 126

// launchPlan is what the launcher needs: the plan and where its status socket is.
type launchPlan struct {
	Plan     Plan `json:"plan"`
	StatusFD int  `json:"statusFD"`
	// Env is the server's environment. The launcher itself runs with almost none: a variable meant
	// for the server (LD_PRELOAD, GODEBUG, ...) must not act on the launcher, which runs before
	// the sandbox is in force.
	Env []string `json:"env"`
	// MinABI raises the Landlock ABI the launcher requires (tests: a kernel that lacks it).
	MinABI int `json:"minABI,omitempty"`
}

// Options tune Wrap. The zero value is what the host uses.
type Options struct {
	// Launcher is the executable that calls [Main] before anything else; os.Executable() when
	// empty (cmd/switchboard and test binaries' TestMain call Main).
	Launcher string
	// Dial is how the proxy reaches an allowed domain; a net.Dialer's when nil. Tests give names
	// to loopback servers through it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// minABI, when above the real minimum, makes the launcher require that Landlock ABI (tests
	// of a kernel that lacks what a sandbox needs).
	minABI int
	// Report receives each refusal as one plain sentence ("blocked: connection to evil.example.com:443
	// (not on the server's network list)"), for the server's status and stderr tail. Safe to call
	// from any goroutine; nil drops them.
	Report func(sentence string)
}

// Sandbox is one wrapped server start. Methods are safe for concurrent use.
type Sandbox struct {
	plan   *Plan
	opts   Options
	host   *os.File // the host's end of the status socket
	child  *os.File // the launcher's end, closed once the launcher has it
	proxy  *proxy
	closed sync.Once
}

// Wrap rewrites cmd (before Start) to run through the launcher under plan: the launcher confines
// itself and then runs cmd's program with cmd's arguments, so the server and everything it
// ever starts is confined (Landlock and namespaces are inherited; there is no way back out).
// After cmd.Start, call [Sandbox.Started]; after the server is gone, [Sandbox.Close].
//
// cmd.Path is resolved by the plan (plan.Command); cmd.Args are kept, argv[0] included. cmd's
// SysProcAttr is kept and added to (set yours before Wrap).
func Wrap(cmd *exec.Cmd, plan *Plan, opts Options) (*Sandbox, error) {
	if plan == nil {
		return nil, errors.New("sandbox: no plan")
	}
	launcher := opts.Launcher
	if launcher == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: find the launcher: %w", err)
		}
		launcher = exe
	}
	s := &Sandbox{plan: plan, opts: opts}
	if err := s.prepare(cmd, launcher); err != nil {
		return nil, err
	}
	return s, nil
}

// Started waits until the launcher has started the server, or says why it did not. It closes
// the launcher's end of the status socket in the host. On error the server never ran; the
// launcher exits by itself with status 126.
func (s *Sandbox) Started() error {
	if s.child != nil {
		s.child.Close()
		s.child = nil
	}
	return s.started()
}

// Close stops the sandbox's proxy (if any). It does not stop the server.
func (s *Sandbox) Close() error {
	s.closed.Do(func() {
		if s.child != nil {
			s.child.Close()
		}
		if s.host != nil {
			s.host.Close()
		}
		if s.proxy != nil {
			s.proxy.close()
		}
	})
	return nil
}

func (s *Sandbox) report(sentence string) {
	if s.opts.Report != nil {
		s.opts.Report(sentence)
	}
}

// serverEnv is the environment the server gets: the caller's, with the private temp.
func serverEnv(env []string, plan *Plan) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "tmpdir", "tmp", "temp", strings.ToLower(envPlan), "npm_config_offline", "npm_config_prefer_offline", "npm_config_logs_dir":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "TMPDIR="+plan.TempDir, "TMP="+plan.TempDir, "TEMP="+plan.TempDir)
	// npx: the cache is read-only to the server, so its logs go to its own folder; without a
	// network it must not try the registry at all (it would wait on DNS, then fail), and with a
	// domain list it uses what is cached first.
	out = append(out, "npm_config_logs_dir="+filepath.Join(filepath.Dir(plan.TempDir), "npm-logs"))
	switch plan.Network.Mode {
	case NetNone:
		out = append(out, "npm_config_offline=true")
	case NetDomains:
		out = append(out, "npm_config_prefer_offline=true")
	}
	return out
}

func encodePlan(lp launchPlan) string {
	b, _ := json.Marshal(lp) // ignore error: plain data
	return string(b)
}
