package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthLoginStatusLogout drives `switchboard auth` against mcptest --oauth, the test playing
// the browser: login prints the URL and signs in, status shows the sign-in without any token,
// logout forgets it.
func TestAuthLoginStatusLogout(t *testing.T) {
	url, dir, cfgFile := startOAuthServer(t)
	store := tokenstore.NewMemory()
	var opened string
	testAuthEnv = &authEnv{store: store, where: "memory", browser: func(u string) error {
		opened = u
		go func() {
			if resp, err := http.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}}
	t.Cleanup(func() { testAuthEnv = nil })
	runAuthCmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append(append([]string{"auth"}, args...), "--config", cfgFile, "--workspace", dir), &out, &errb)
		return code, out.String(), errb.String()
	}

	code, out, errOut := runAuthCmd("login", "remote")
	if code != 0 || !strings.Contains(out, "signed in to remote; the server is ready") || !strings.Contains(errOut, opened) || opened == "" {
		t.Fatalf("login = %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	cred, err := store.Load(context.Background(), "remote")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAuthCmd("status")
	if code != 0 || !strings.Contains(out, "remote\tsigned in at "+strings.TrimSuffix(url, "/mcp")) || !strings.Contains(out, "refreshable") {
		t.Errorf("status = %d %s", code, out)
	}
	if strings.Contains(out+errOut, cred.AccessToken) || strings.Contains(out+errOut, cred.RefreshToken) {
		t.Errorf("a token was printed")
	}
	if code, out, _ = runAuthCmd("logout", "remote"); code != 0 {
		t.Errorf("logout = %d %s", code, out)
	}
	if _, out, _ = runAuthCmd("status", "remote"); !strings.Contains(out, "remote\tnot signed in") {
		t.Errorf("status after logout = %s", out)
	}
	if code, _, errOut = runAuthCmd("login", "nope"); code != 1 || !strings.Contains(errOut, `no http or sse MCP server named "nope"`) {
		t.Errorf("login nope = %d %s", code, errOut)
	}
}

// startOAuthServer starts mcptest --oauth over HTTP and writes a config naming it "remote"; it
// returns the server's URL, a folder (the user's config home) and the config file.
func startOAuthServer(t *testing.T) (url, dir, cfgFile string) {
	t.Helper()
	needFaultBinaries(t)
	cmd := exec.Command(fBins.mcptest, "--http", "127.0.0.1:0", "--oauth")
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderrPipe)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "mcptest: listening on "); ok {
			url = u
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	dir = t.TempDir()
	cfgFile = filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": map[string]any{"type": "http", "url": url}}})
	os.WriteFile(cfgFile, b, 0o600)
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	return url, dir, cfgFile
}

// TestCheckAndPinsUseSignIn: check and pins start a remote server with the sign-in that
// `switchboard auth login` kept (they showed it failed, "authorization required", even signed
// in), and check shows one not signed in as needs-auth, saying how to sign in.
func TestCheckAndPinsUseSignIn(t *testing.T) {
	_, dir, cfgFile := startOAuthServer(t)
	store := tokenstore.NewMemory()
	oldStore := openInputStore
	openInputStore = func() (tokenstore.Store, string) { return store, "memory" }
	t.Cleanup(func() { openInputStore = oldStore })
	testAuthEnv = &authEnv{store: store, where: "memory", browser: func(u string) error {
		go func() {
			if resp, err := http.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}}
	t.Cleanup(func() { testAuthEnv = nil })
	runCmd := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(append(args, "--config", cfgFile, "--workspace", dir), &out, &errb)
		return code, out.String() + errb.String()
	}

	code, out := runCmd("check")
	if code != 1 || !strings.Contains(out, "remote  NEEDS-AUTH  http") || !strings.Contains(out, "1 needs-auth") ||
		!strings.Contains(out, "needs you to sign in: switchboard auth login remote") {
		t.Errorf("check before sign-in = %d\n%s", code, out)
	}
	if code, out := runCmd("auth", "login", "remote"); code != 0 {
		t.Fatalf("login = %d\n%s", code, out)
	}
	code, out = runCmd("check")
	if code != 0 || !strings.Contains(out, "remote  READY  http  8 tools") || !strings.Contains(out, "mcp__remote__echo") {
		t.Errorf("check after sign-in = %d\n%s", code, out)
	}
	cred, err := store.Load(context.Background(), "remote")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, cred.AccessToken) {
		t.Errorf("check printed the access token")
	}
	if code, out = runCmd("pins", "list", "remote"); code != 0 || strings.Contains(out, "not compared") {
		t.Errorf("pins list after sign-in = %d\n%s", code, out)
	}
}
