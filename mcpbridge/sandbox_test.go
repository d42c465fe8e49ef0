package mcpbridge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
)

const cfgTimeout = 20 * time.Second

// sandboxHome makes a home with a secret and Switchboard's state in it, for the registry's
// sandboxed servers (HOME and XDG_STATE_HOME point there).
func sandboxHome(t *testing.T) (home string) {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox on this system: %v", err)
	}
	home = t.TempDir()
	for path, body := range map[string]string{
		".ssh/id_rsa": "PRIVATE KEY",
		".local/state/switchboard/oauth-tokens.json": `{"t":"s3cret"}`,
	} {
		p := filepath.Join(home, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local/state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return home
}

// TestSandboxedServer: a sandboxed stdio server starts, answers, says what confines it in its
// status, and gets its private temp; the confirm gate is not the registry's business, so a call
// is made as for any server.
func TestSandboxedServer(t *testing.T) {
	sandboxHome(t)
	cfg := stdioCfg("boxed")
	cfg.Sandbox = &sandbox.Profile{}
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, cfg)["boxed"]
	if st.State != StateReady {
		t.Fatalf("status %+v", st)
	}
	if st.Sandbox != "sandboxed: no network, writes only its own folder" {
		t.Errorf("status sandbox = %q", st.Sandbox)
	}
	res, err := r.Call(context.Background(), "mcp__boxed__echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.Text != "hi" {
		t.Errorf("echo: %+v, %v", res, err)
	}
	res, err = r.Call(context.Background(), "mcp__boxed__env", json.RawMessage(`{"name":"TMPDIR"}`))
	if err != nil || !strings.Contains(res.Text, filepath.Join("switchboard", "sandboxes", "boxed-")) {
		t.Errorf("TMPDIR in the sandbox: %+v, %v", res, err)
	}
	unboxed := stdioCfg("plain")
	st = applyAndWait(t, r, cfg, unboxed)["plain"]
	if st.Sandbox != "" {
		t.Errorf("an unsandboxed server's status says %q", st.Sandbox)
	}
}

// TestSandboxStatusNamesCodePaths: a server whose entry lets it write a git hooks folder says so
// in its status, apart from its other writes.
func TestSandboxStatusNamesCodePaths(t *testing.T) {
	home := sandboxHome(t)
	hooks := filepath.Join(home, "p", ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := stdioCfg("hooked")
	cfg.Sandbox = &sandbox.Profile{Write: []string{filepath.Join(home, "p"), hooks}}
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, cfg)["hooked"]
	if st.State != StateReady {
		t.Fatalf("status %+v", st)
	}
	want := "sandboxed: no network, writes only " + filepath.Join(home, "p") + " and its own folder, also writes " + hooks + ", which git, an editor or a shell runs code from outside the sandbox"
	if st.Sandbox != want {
		t.Errorf("status sandbox = %q, want %q", st.Sandbox, want)
	}
}

// TestSandboxRefusedNeverRuns: a profile that lists a secret fails the server with the reason,
// and nothing ran.
func TestSandboxRefusedNeverRuns(t *testing.T) {
	home := sandboxHome(t)
	marker := filepath.Join(home, "ran")
	cfg := config.ServerConfig{Name: "greedy", Transport: config.TransportStdio, Command: "/bin/sh",
		Args: []string{"-c", "echo > " + marker}, StartupTimeout: cfgTimeout, CallTimeout: cfgTimeout, Source: "test",
		Sandbox: &sandbox.Profile{Read: []string{"~"}}}
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, cfg)["greedy"]
	if st.State != StateFailed || !strings.Contains(st.Error, "it holds ~/.ssh") {
		t.Errorf("status %+v, want failed naming ~/.ssh", st)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the server ran")
	}
}

// TestSandboxBlockedInStderrTail: a server that tries to read ~/.ssh/id_rsa has the refusal in
// its stderr tail as a plain sentence.
func TestSandboxBlockedInStderrTail(t *testing.T) {
	home := sandboxHome(t)
	id := filepath.Join(home, ".ssh", "id_rsa")
	cfg := config.ServerConfig{Name: "nosy", Transport: config.TransportStdio, Command: "/bin/sh",
		Args:           []string{"-c", "cat " + id + "; exec " + mcptestBin},
		StartupTimeout: cfgTimeout, CallTimeout: cfgTimeout, Source: "test", Sandbox: &sandbox.Profile{Read: []string{filepath.Dir(mcptestBin)}}}
	// The refusal is news: the registry reports a change when it arrives (the line may come after
	// the server is ready).
	blocked := make(chan ServerStatus, 1)
	r := newTestRegistry(t, Options{OnChange: func(servers []ServerStatus) {
		for _, s := range servers {
			if s.Name == "nosy" && s.State == StateReady && len(s.Blocked) > 0 {
				select {
				case blocked <- s:
				default:
				}
			}
		}
	}})
	r.Apply(context.Background(), []config.ServerConfig{cfg})
	var st ServerStatus
	select {
	case st = <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatalf("no refusal reported: %+v", statusMap(r)["nosy"])
	}
	if want := "blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)"; !slices.Contains(st.Blocked, want) {
		t.Errorf("status blocked %q lacks %q", st.Blocked, want)
	}
	r.mu.Lock()
	c := r.servers["nosy"].conn
	r.mu.Unlock()
	if tail := c.stderrTail(); !strings.Contains(tail, "switchboard: blocked: read of ~/.ssh/id_rsa") {
		t.Errorf("stderr tail %q lacks the sentence", tail)
	}
}

// BenchmarkSandboxedCall measures a call to mcptest's echo through the registry, sandboxed and
// not, in the same run: the sandbox adds nothing per call (stdio goes straight to the server).
//
//	go test -run '^$' -bench SandboxedCall -benchtime 2000x ./mcpbridge
func BenchmarkSandboxedCall(b *testing.B) {
	if err := sandbox.Available(); err != nil {
		b.Skipf("no sandbox on this system: %v", err)
	}
	boxed := stdioCfg("boxed")
	boxed.Sandbox = &sandbox.Profile{}
	r := newTestRegistry(b, Options{})
	st := applyAndWait(b, r, boxed, stdioCfg("plain"))
	if st["boxed"].State != StateReady || st["plain"].State != StateReady {
		b.Fatalf("servers: %+v", st)
	}
	args := json.RawMessage(`{"text":"hello"}`)
	for _, name := range []string{"plain", "boxed", "plain", "boxed"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if res, err := r.Call(context.Background(), "mcp__"+name+"__echo", args); err != nil || res.Text != "hello" {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}
