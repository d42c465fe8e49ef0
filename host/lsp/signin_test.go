package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// startOAuthServer runs mcptest --http --oauth and returns its MCP URL.
func startOAuthServer(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(mcptestBin, append([]string{"--http", "127.0.0.1:0", "--oauth"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "mcptest: listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return u
		}
	}
	t.Fatal("mcptest --oauth did not report its address")
	return ""
}

// TestSignInFromEditor: a server that answers 401 is needs-auth; the editor is asked "MCP server
// 'remote' needs you to sign in (http://127.0.0.1:PORT)." with Sign in / Not now; Sign in opens
// the authorization page with window/showDocument (external); the test plays the browser, and
// the server connects with no restart. No token ever reaches a frame to the editor.
func TestSignInFromEditor(t *testing.T) {
	u := startOAuthServer(t)
	tokens := tokenstore.NewMemory()
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": map[string]any{"type": "http", "url": u}}})
	env := hosttest.Run(t, hosttest.Config{
		UserFiles: map[string]string{"mcp.json": string(mcpJSON)},
		Options:   func(o *lsp.Options) { o.Tokens = tokens },
		Responder: func(_ context.Context, p hosttest.ShowMessageRequestParams) string {
			if strings.Contains(p.Message, "needs you to sign in") {
				return wire.TitleSignIn
			}
			return ""
		},
	})
	st := env.AwaitServer("remote", mcpbridge.StateNeedsAuth)
	if st.Error == "" {
		t.Errorf("needs-auth without a reason: %+v", st)
	}
	prompt := env.Await("sign-in prompt", func(s *hosttest.State) bool {
		return len(s.RequestParams("window/showMessageRequest")) == 1
	}).RequestParams("window/showMessageRequest")[0]
	var p hosttest.ShowMessageRequestParams
	json.Unmarshal(prompt, &p)
	host := strings.TrimSuffix(u, "/mcp")
	if p.Message != "MCP server 'remote' needs you to sign in ("+host+")." || len(p.Actions) != 2 ||
		p.Actions[0].Title != "Sign in" || p.Actions[1].Title != "Not now" {
		t.Errorf("prompt = %+v", p)
	}
	doc := env.Await("showDocument", func(s *hosttest.State) bool {
		return len(s.RequestParams("window/showDocument")) == 1
	}).RequestParams("window/showDocument")[0]
	var sd struct {
		URI      string `json:"uri"`
		External bool   `json:"external"`
	}
	json.Unmarshal(doc, &sd)
	if !sd.External || !strings.HasPrefix(sd.URI, host+"/authorize?") {
		t.Fatalf("showDocument = %s, want the authorize URL with external", doc)
	}
	resp, err := http.Get(sd.URI) // the browser: approve, redirect to the loopback listener
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	env.AwaitServer("remote", mcpbridge.StateReady)

	c, err := tokens.Load(context.Background(), "remote")
	if err != nil || c.AccessToken == "" {
		t.Fatalf("no credential stored: %v", err)
	}
	// The tools work, and then signing out forgets the tokens and asks for a sign-in again.
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdSignOut, map[string]string{"server": "remote"}, &servers)
	if servers[0].State != mcpbridge.StateNeedsAuth {
		t.Errorf("after signOut: %+v", servers[0])
	}
	if _, err := tokens.Load(context.Background(), "remote"); err == nil {
		t.Errorf("signOut kept the credential")
	}
	frames := env.FramesFromHost()
	for _, secret := range []string{c.AccessToken, c.RefreshToken} { // the client_id is public: it is in the authorize URL
		if secret != "" && strings.Contains(frames, secret) {
			t.Errorf("a secret of the sign-in (%.6s...) reached a frame to the editor", secret)
		}
	}
}

func TestSignInCommandErrors(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		UserFiles: map[string]string{"mcp.json": `{"mcpServers":{"a":{"command":"` + jsonEsc(mcptestBin) + `"}}}`},
		Options:   func(o *lsp.Options) { o.Tokens = tokenstore.NewMemory() },
	})
	env.AwaitServer("a", "ready")
	for _, tc := range []struct {
		cmd  string
		arg  any
		want string
	}{
		{wire.CmdSignIn, map[string]string{}, "server is required"},
		{wire.CmdSignIn, map[string]string{"server": "nope"}, "unknown server"},
		{wire.CmdSignIn, map[string]string{"server": "a"}, "only http and sse servers sign in"},
		{wire.CmdSignOut, map[string]string{"server": "a"}, "no sign-in"},
	} {
		err := env.Command(tc.cmd, tc.arg, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v = %v, want %q", tc.cmd, tc.arg, err, tc.want)
		}
	}
}
