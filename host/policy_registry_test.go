package host

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry/registrytest"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

const braveDoc = `{"server": {"name": "io.github.modelcontextprotocol/brave-search", "description": "Brave Search",
  "version": "1.0.2", "packages": [{"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
  "identifier": "@modelcontextprotocol/server-brave-search", "version": "1.0.2", "transport": {"type": "stdio"},
  "environmentVariables": [{"name": "BRAVE_API_KEY", "isRequired": true, "isSecret": true}]}]},
  "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}}`

// rootPolicy writes settings as a root-owned /etc/switchboard-like tree and loads it.
func rootPolicy(t *testing.T, settings string) *policy.Policy {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make root-owned policy files")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "switchboard")
	os.MkdirAll(dir, 0o755)
	f := filepath.Join(dir, policy.SettingsFile)
	os.WriteFile(f, []byte(settings), 0o644)
	os.Chmod(f, 0o644)
	p := policy.Load(policy.Options{Paths: policy.Paths{Dir: dir}})
	if err := p.Broken(); err != nil {
		t.Fatal(err)
	}
	return p
}

// installed writes the registry's entry for brave into a user file, as mcp add --from-registry
// does, and returns it loaded (with edit applied to the file's JSON first, when given).
func installed(t *testing.T, regURL string, edit func(e *config.Entry)) config.ServerConfig {
	t.Helper()
	c, err := mcpregistry.NewClient(regURL, mcpregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Get(t.Context(), "io.github.modelcontextprotocol/brave-search", "1.0.2")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := mcpregistry.Derive(&r.Server, config.RegistryRef{URL: c.URL(), Name: r.Server.Name, Version: r.Server.Version}, "brave")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&plan.Entry)
	}
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := config.AddServerInputs(file, "brave", plan.Entry, plan.Inputs); err != nil {
		t.Fatal(err)
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{UserFile: file})
	if len(errs) > 0 || len(cfgs) != 1 {
		t.Fatalf("load: %v %v", cfgs, errs)
	}
	return cfgs[0]
}

// TestPolicyRegistryOnly: with mcpAccess "registry" in a real root-owned policy file, only the
// registry's exact launch starts; a hand-edited entry, an entry written by hand, and an entry
// the registry cannot vouch for (down, nothing cached) are blocked with the person's sentence.
func TestPolicyRegistryOnly(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	reg := registrytest.New(t, []byte(braveDoc))
	p := rootPolicy(t, `{"mcpAccess": "registry", "mcpRegistryUrl": "`+reg.URL+`", "adminContact": {"email": "it@example.com"}}`)

	if b := PolicyBlock(p, installed(t, reg.URL, nil)); b != nil {
		t.Fatalf("the registry's own entry is blocked: %+v", b)
	}
	for name, tc := range map[string]struct {
		cfg  config.ServerConfig
		want string
	}{
		"hand-edited version": {installed(t, reg.URL, func(e *config.Entry) { e.Args[1] = "@modelcontextprotocol/server-brave-search@latest" }), "command line"},
		"NODE_OPTIONS added":  {installed(t, reg.URL, func(e *config.Entry) { e.Env["NODE_OPTIONS"] = "--require /tmp/x.js" }), "NODE_OPTIONS"},
		"written by hand":     {config.ServerConfig{Name: "brave", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search@1.0.2"}}, "not installed from a registry"},
	} {
		b := PolicyBlock(p, tc.cfg)
		if b == nil {
			t.Errorf("%s: admitted", name)
			continue
		}
		if !strings.HasPrefix(b.Message, "Blocked by your organisation: ") || !strings.Contains(b.Message, tc.want) ||
			!strings.Contains(b.Message, "it@example.com") || !strings.HasSuffix(b.Rule, "#/mcpAccess") {
			t.Errorf("%s: %+v", name, b)
		}
	}

	// A registry that cannot be reached, and no copy of the document: fail closed.
	down := registrytest.New(t, []byte(braveDoc))
	cfg := installed(t, down.URL, nil)
	down.SetDown(true)
	p = rootPolicy(t, `{"mcpAccess": "registry", "mcpRegistryUrl": "`+down.URL+`"}`)
	if b := PolicyBlock(p, cfg); b == nil || !strings.Contains(b.Message, "cannot be checked") {
		t.Errorf("registry down, nothing cached: %+v", b)
	}
	// Without mcpAccess registry the registry is not asked.
	hits := reg.Hits.Load()
	if b := PolicyBlock(rootPolicy(t, `{"mcpRegistryUrl": "`+reg.URL+`"}`), installed(t, reg.URL, func(e *config.Entry) { e.Args = append(e.Args, "x") })); b != nil {
		t.Errorf("blocked without mcpAccess registry: %+v", b)
	}
	if reg.Hits.Load() != hits+1 { // the one Get of installed
		t.Errorf("the registry was asked for admission without mcpAccess registry")
	}
}

// TestPolicyBlockAudited: a blocked server is one audit line (by policy, the rule and its file),
// not one per apply, start or reconnect; blocked again after it was allowed, another.
func TestPolicyBlockAudited(t *testing.T) {
	p := rootPolicy(t, `{"deniedMcpServers": [{"serverName": "shell"}]}`)
	dir := p.Sources()[0].Path
	log, err := permissions.OpenAuditLog(filepath.Join(t.TempDir(), "audit.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	a := &App{policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: filepath.Dir(dir)}}), audit: log}
	shell := config.ServerConfig{Name: "shell", Transport: "stdio", Command: "sh"}
	for range 3 { // apply, start, reconnect
		if a.admit(shell) == nil {
			t.Fatal("shell admitted")
		}
	}
	if a.admit(config.ServerConfig{Name: "ok", Transport: "stdio", Command: "sh"}) != nil {
		t.Fatal("ok blocked")
	}
	a.auditBlock("shell", nil) // the policy let it start for a while
	a.admit(shell)
	if err := log.Flush(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(log.Path())
	defer f.Close()
	var lines []permissions.AuditEntry
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e permissions.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, e)
	}
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2 (one per block): %+v", len(lines), lines)
	}
	e := lines[0]
	if e.Tool != "mcp__shell" || e.Server != "shell" || e.By != "policy" || e.Decision != "deny" ||
		e.Entry != dir+"#/deniedMcpServers/0" || e.File != dir || !strings.Contains(e.Reason, "Blocked by your organisation") {
		t.Errorf("audit line %+v", e)
	}
}

// TestPolicyRegistryForgedCache is the attack on mcpAccess "registry" through the user's own
// cache folder: after a real install, the user edits the cached server.json to declare
// NODE_OPTIONS, adds NODE_OPTIONS to the entry by hand and cuts the network. Nothing this
// process verified vouches for the entry, so it is blocked, saying the registry could not be
// reached.
func TestPolicyRegistryForgedCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	reg := registrytest.New(t, []byte(braveDoc))
	// The forged document goes where the cache kept server.json files (named by the hash of the
	// document's URL) before it went: the user can write there, so nothing there may count.
	forged := strings.Replace(braveDoc, `"environmentVariables": [`, `"environmentVariables": [{"name": "NODE_OPTIONS"}, `, 1)
	sum := sha256.Sum256([]byte(reg.URL + "/v0.1/servers/" + url.PathEscape("io.github.modelcontextprotocol/brave-search") + "/versions/1.0.2"))
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cacheDir = filepath.Join(cacheDir, "switchboard", "registry")
	os.MkdirAll(cacheDir, 0o700)
	if err := os.WriteFile(filepath.Join(cacheDir, hex.EncodeToString(sum[:16])+".json"), []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := installed(t, reg.URL, func(e *config.Entry) { e.Env["NODE_OPTIONS"] = "--require /tmp/x.js" })
	reg.Close() // the network is cut: nothing answers at the registry's address
	p := rootPolicy(t, `{"mcpAccess": "registry", "mcpRegistryUrl": "`+reg.URL+`"}`)
	b := PolicyBlock(p, cfg)
	if b == nil {
		t.Fatal("a hand-edited entry was admitted on a forged cache with the registry unreachable")
	}
	t.Logf("blocked: %s", b.Message)
	if !strings.Contains(b.Message, "could not be reached") || !strings.Contains(b.Message, reg.URL) {
		t.Errorf("blocked, but the message does not say the registry could not be reached: %q", b.Message)
	}
}
