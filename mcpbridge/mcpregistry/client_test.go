package mcpregistry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry/registrytest"
)

func doc(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const brave = "io.github.modelcontextprotocol/brave-search"

func TestGet(t *testing.T) {
	reg := registrytest.New(t, doc(t, "brave.json"))
	c, err := mcpregistry.NewClient(reg.URL, mcpregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.2", "latest"} {
		r, err := c.Get(context.Background(), brave, v)
		if err != nil {
			t.Fatalf("Get %s: %v", v, err)
		}
		if r.Server.Version != "1.0.2" || r.Status() != "active" || len(r.Server.Packages) != 1 {
			t.Errorf("Get %s = %+v", v, r)
		}
	}
	if _, err := c.Get(context.Background(), brave, "9.9.9"); !errors.Is(err, mcpregistry.ErrNotFound) {
		t.Errorf("Get of a missing version: %v, want ErrNotFound", err)
	}
}

// TestGetHostile: a registry (or whoever answers for it) serving what it should not.
func TestGetHostile(t *testing.T) {
	reg := registrytest.New(t, doc(t, "brave.json"))
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(doc(t, "brave.json"))
	}))
	defer other.Close()
	path := "/v0.1/servers/" + strings.ReplaceAll(brave, "/", "%2F") + "/versions/"
	reg.Handle(path+"2.0.0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound) // another host (port)
	})
	reg.Handle(path+"3.0.0", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"server": {"name": "` + brave + `", "version": "3.0.0", "description": "`))
		w.Write([]byte(strings.Repeat("A", mcpregistry.MaxDocument)))
		w.Write([]byte(`"}}`))
	})
	reg.Handle(path+"4.0.0", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"server": {"name": "io.github.evil/other", "version": "4.0.0", "description": "x"}}`))
	})
	reg.Handle(path+"5.0.0", func(w http.ResponseWriter, r *http.Request) {
		w.Write(doc(t, "brave.json")) // says 1.0.2
	})
	c, err := mcpregistry.NewClient(reg.URL, mcpregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, version, want string }{
		{brave, "2.0.0", "another host"},
		{brave, "3.0.0", "larger than"},
		{brave, "4.0.0", "answered with a server named"},
		{brave, "5.0.0", "answered with version"},
		{"io.github.acme/ser\u202ever", "1.0.0", "not an MCP Registry server name"},
		{"io.github.acme/server\x1b[2J", "1.0.0", "not an MCP Registry server name"},
	} {
		_, err := c.Get(context.Background(), tc.name, tc.version)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Get %q@%s: %v, want an error saying %q", tc.name, tc.version, err, tc.want)
		}
	}
	for _, u := range []string{"http://registry.example.com", "ftp://x", "https://user:pw@h/", "not a url"} {
		if _, err := mcpregistry.NewClient(u, mcpregistry.Options{}); err == nil {
			t.Errorf("NewClient(%q) accepted", u)
		}
	}
}

// TestVerify: an entry proves it came from the registry only by being, byte for byte, what the
// registry's server.json gives; a hand-edited one fails; with the registry down, the copy this
// process read decides, and with no copy nothing is admitted.
func TestVerify(t *testing.T) {
	reg := registrytest.New(t, doc(t, "brave.json"), doc(t, "weather.json"))
	c, err := mcpregistry.NewClient(reg.URL, mcpregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := c.Get(ctx, brave, "1.0.2")
	if err != nil {
		t.Fatal(err)
	}
	ref := config.RegistryRef{URL: reg.URL + "/", Name: brave, Version: "1.0.2"}
	plan, err := mcpregistry.Derive(&r.Server, ref, "brave")
	if err != nil {
		t.Fatal(err)
	}
	good := config.ServerConfig{Name: "brave", Transport: "stdio", Command: plan.Entry.Command, Args: plan.Entry.Args,
		Env: map[string]string{"BRAVE_API_KEY": "the-answer", "LOG_LEVEL": "debug"}, Registry: &ref}
	if err := mcpregistry.Verify(ctx, c, good); err != nil {
		t.Fatalf("Verify of the registry's own entry: %v", err)
	}
	edit := func(f func(c *config.ServerConfig)) config.ServerConfig {
		c := good
		c.Args = append([]string(nil), good.Args...)
		c.Env = map[string]string{"BRAVE_API_KEY": "the-answer"}
		f(&c)
		return c
	}
	for name, tc := range map[string]struct {
		c    config.ServerConfig
		want string
	}{
		"no registry": {edit(func(c *config.ServerConfig) { c.Registry = nil }), "was not installed from a registry"},
		"other registry": {edit(func(c *config.ServerConfig) {
			c.Registry = &config.RegistryRef{URL: "https://evil.example", Name: brave, Version: "1.0.2"}
		}), "not from the organisation's registry"},
		"version moved": {edit(func(c *config.ServerConfig) { c.Args[1] = "@modelcontextprotocol/server-brave-search@latest" }), "command line"},
		"arg added":     {edit(func(c *config.ServerConfig) { c.Args = append(c.Args, "--evil") }), "command line"},
		"other command": {edit(func(c *config.ServerConfig) { c.Command = "/tmp/npx" }), "command line"},
		"NODE_OPTIONS":  {edit(func(c *config.ServerConfig) { c.Env["NODE_OPTIONS"] = "--require /tmp/x.js" }), "NODE_OPTIONS is not in its server.json"},
		"cwd":           {edit(func(c *config.ServerConfig) { c.Cwd = "/tmp/evil" }), "cwd"},
		"missing version": {edit(func(c *config.ServerConfig) {
			c.Registry = &config.RegistryRef{URL: reg.URL, Name: brave, Version: "0.0.1"}
		}), "not in the registry"},
		"other server doc": {edit(func(c *config.ServerConfig) {
			c.Registry = &config.RegistryRef{URL: reg.URL, Name: "io.github.example/weather-mcp", Version: "0.5.0"}
		}), "command line"},
	} {
		err := mcpregistry.Verify(ctx, c, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Verify = %v, want an error saying %q", name, err, tc.want)
		}
	}

	// Down: this process's copy decides; a new process (client) has none and admits nothing.
	reg.SetDown(true)
	if err := mcpregistry.Verify(ctx, c, good); err != nil {
		t.Errorf("Verify with the registry down, read before: %v", err)
	}
	c2, _ := mcpregistry.NewClient(reg.URL, mcpregistry.Options{})
	if err := mcpregistry.Verify(ctx, c2, good); err == nil || !strings.Contains(err.Error(), "could not be reached (HTTP 503)") {
		t.Errorf("Verify with the registry down and nothing read = %v, want it refused as unreachable", err)
	}
}

// TestLookupDownOnce: a registry that cannot be reached is asked once a minute, not at every
// start or retry (each would wait for its timeout); once it answers again, it decides again.
func TestLookupDownOnce(t *testing.T) {
	reg := registrytest.New(t, doc(t, "brave.json"))
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	c, err := mcpregistry.NewClient(reg.URL, mcpregistry.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	reg.SetDown(true)
	for range 3 {
		if _, err := c.Lookup(context.Background(), brave, "1.0.2", time.Hour); err == nil {
			t.Fatal("Lookup with the registry down and nothing kept succeeded")
		}
	}
	if n := reg.Requests.Load(); n != 1 {
		t.Errorf("%d requests to a registry that is down, want 1", n)
	}
	reg.SetDown(false)
	now = now.Add(2 * time.Minute)
	if _, err := c.Lookup(context.Background(), brave, "1.0.2", time.Hour); err != nil {
		t.Errorf("Lookup after the registry came back: %v", err)
	}
}
