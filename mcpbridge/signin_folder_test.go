package mcpbridge

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// Two repositories each define a server "notes" with their own URL, and every window shares the
// one token store (the OS keychain). Before, the sign-in was kept under the bare name: B's sign-in
// replaced A's (A then needed a sign-in again), and signing out of B's revoked A's token at A's
// authorization server. Each now keeps its own (config.ServerConfig.StateKey).
func TestSignInKeptPerFolder(t *testing.T) {
	store := tokenstore.NewMemory()
	urlA := startMCPTestHTTP(t, "--http", "--oauth")
	urlB := startMCPTestHTTP(t, "--http", "--oauth")
	window := func(u, folder string) (*Registry, config.ServerConfig) {
		r := newTestRegistry(t, Options{Tokens: store, PingInterval: -1, Logger: slog.New(slog.DiscardHandler),
			Trusted: func(config.ServerConfig) bool { return true }})
		return r, config.ServerConfig{Name: "notes", Transport: config.TransportHTTP, URL: u, StartupTimeout: 10 * time.Second,
			CallTimeout: 10 * time.Second, Source: folder + "/.vscode/mcp.json", Folder: folder, WorkspaceOnly: true}
	}
	rA, cA := window(urlA, "/repoA")
	rB, cB := window(urlB, "/repoB")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	signIn := func(r *Registry) {
		t.Helper()
		if st, err := r.SignIn(ctx, "notes", oauth.SignInOptions{Open: browser, Timeout: 20 * time.Second}); err != nil || st.State != StateReady {
			t.Fatalf("sign in: %+v %v", st, err)
		}
	}
	applyAndWait(t, rA, cA)
	signIn(rA)
	applyAndWait(t, rB, cB)
	signIn(rB)
	if st, _ := rA.ReconnectServer(ctx, "notes"); st.State != StateReady {
		t.Errorf("A after B signed in: %s %q", st.State, st.Error)
	}
	before := revokes(t, urlA)
	if _, err := rB.SignOut(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if after := revokes(t, urlA); after != before {
		t.Errorf("signing out of B's server revoked A's token (revocations %d -> %d)", before, after)
	}
	if st, _ := rA.ReconnectServer(ctx, "notes"); st.State != StateReady {
		t.Errorf("A after B signed out: %s %q", st.State, st.Error)
	}
	if c, err := store.Load(ctx, cA.StateKey()); err != nil || c.URL != urlA {
		t.Errorf("A's credential: %+v %v", c, err)
	}
}

// A sign-in an older Switchboard (or a user-level server) kept under the bare name is never taken
// over by a repository's server, even one that names the same URL (only words in its file): it
// asks for its own sign-in, and the bare one stays as it was.
func TestSignInFromBeforeFolders(t *testing.T) {
	store := tokenstore.NewMemory()
	urlA := startMCPTestHTTP(t, "--http", "--oauth")
	old := newTestRegistry(t, Options{Tokens: store, PingInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	bare := config.ServerConfig{Name: "notes", Transport: config.TransportHTTP, URL: urlA, StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, Source: "user"}
	applyAndWait(t, old, bare)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if st, err := old.SignIn(ctx, "notes", oauth.SignInOptions{Open: browser, Timeout: 20 * time.Second}); err != nil || st.State != StateReady {
		t.Fatalf("sign in: %+v %v", st, err)
	}
	before, _ := store.Load(ctx, "notes")
	r := newTestRegistry(t, Options{Tokens: store, PingInterval: -1, Logger: slog.New(slog.DiscardHandler),
		Trusted: func(config.ServerConfig) bool { return true }})
	cfg := config.ServerConfig{Name: "notes", Transport: config.TransportHTTP, URL: urlA, StartupTimeout: 10 * time.Second,
		CallTimeout: 10 * time.Second, Source: "/repo/.mcp.json", Folder: "/repo", WorkspaceOnly: true}
	if st := applyAndWait(t, r, cfg); st["notes"].State != StateNeedsAuth {
		t.Errorf("a repository's server of the same URL: %s %q, want %s", st["notes"].State, st["notes"].Error, StateNeedsAuth)
	}
	if _, err := store.Load(ctx, cfg.StateKey()); err == nil {
		t.Errorf("the repository's server has a credential it was never given")
	}
	if _, err := r.SignOut(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if after, err := store.Load(ctx, "notes"); err != nil || after.RefreshToken != before.RefreshToken {
		t.Errorf("the bare sign-in after the repository's sign-out: %+v %v", after, err)
	}
	if st, _ := old.ReconnectServer(ctx, "notes"); st.State != StateReady {
		t.Errorf("the user's server after the repository's sign-out: %s %q", st.State, st.Error)
	}
}

// revokes is how many revocations the oauth server of mcptest at u has had.
func revokes(t *testing.T, u string) int {
	e := &oauthEnv{url: u}
	s, _ := e.stats(t)
	return s["revoke"]
}
