package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry/registrytest"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

const regBrave = `{"server": {
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
  "name": "io.github.modelcontextprotocol/brave-search",
  "description": "MCP server for Brave Search API integration",
  "repository": {"url": "https://github.com/modelcontextprotocol/servers", "source": "github"},
  "version": "1.0.2",
  "packages": [{"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
    "identifier": "@modelcontextprotocol/server-brave-search", "version": "1.0.2", "transport": {"type": "stdio"},
    "environmentVariables": [
      {"name": "BRAVE_API_KEY", "description": "Brave Search API Key", "isRequired": true, "isSecret": true},
      {"name": "LOG_LEVEL", "description": "Logging level", "default": "info"}]}]},
  "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}}`

// A publisher's hostile text: terminal escapes and a bidi override in what is shown.
const regHostile = `{"server": {"name": "io.github.evil/shiny", "title": "Shiny\u001b[2J\u001b]8;;https://evil.example\u0007",
  "description": "Totally safe \u202eexe.sh",
  "version": "2.0.0",
  "packages": [{"registryType": "npm", "identifier": "shiny-mcp", "version": "2.0.0", "transport": {"type": "stdio"},
    "environmentVariables": [{"name": "SHINY_TOKEN", "description": "token\u001b[31m", "isSecret": true}]}]}}`

const regRange = `{"server": {"name": "io.github.evil/moving", "description": "x", "version": "1.0.0",
  "packages": [{"registryType": "npm", "identifier": "moving-mcp", "version": "^1.0.0", "transport": {"type": "stdio"}}]}}`

const regFlag = `{"server": {"name": "io.github.evil/flag", "description": "x", "version": "1.0.0",
  "packages": [{"registryType": "npm", "identifier": "--registry=https://evil.example", "version": "1.0.0", "transport": {"type": "stdio"}}]}}`

const regLatest = `{"server": {"name": "io.github.evil/latest", "description": "x", "version": "latest",
  "packages": [{"registryType": "npm", "identifier": "latest-mcp", "version": "1.0.0", "transport": {"type": "stdio"}}]}}`

func registryHome(t *testing.T) (user string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv(registryEnv, "")
	old, oldTerm := policyPaths, mcpStdinTerminal
	policyPaths = func() policy.Paths { return policy.Paths{Dir: filepath.Join(home, "no-policy")} }
	mcpStdinTerminal = func() bool { return false }
	t.Cleanup(func() { policyPaths, mcpStdinTerminal = old, oldTerm })
	return filepath.Join(home, ".config", "switchboard", "mcp.json")
}

// TestMCPAddFromRegistry: the entry is the registry's, pinned, with its secret as an input; what
// will run is shown first; the file's comments stay; nothing is written without a yes.
func TestMCPAddFromRegistry(t *testing.T) {
	user := registryHome(t)
	reg := registrytest.New(t, []byte(regBrave))
	const orig = "{\n  // mine\n  \"mcpServers\": {\n    \"keep\": {\"command\": \"k\"}, // keep this\n  },\n}\n"
	os.MkdirAll(filepath.Dir(user), 0o700)
	os.WriteFile(user, []byte(orig), 0o600)

	// Without a terminal and without --yes: shown, not written.
	out, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--registry", reg.URL)
	if code != 2 || !strings.Contains(errs, "--yes") || !strings.Contains(out, "It will run: npx -y @modelcontextprotocol/server-brave-search@1.0.2") {
		t.Fatalf("no --yes: %d\n%s\n%s", code, out, errs)
	}
	if b, _ := os.ReadFile(user); string(b) != orig {
		t.Fatalf("written without a yes:\n%s", b)
	}
	out, errs, code = runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--registry", reg.URL, "--yes")
	if code != 0 {
		t.Fatalf("add: %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"io.github.modelcontextprotocol/brave-search 1.0.2: MCP server for Brave Search API integration",
		"environment variable BRAVE_API_KEY: Brave Search API Key, a secret, asked for when it first starts (or: switchboard mcp input set brave-search-BRAVE_API_KEY)",
		"optional environment variable LOG_LEVEL, not set", "Added brave-search to"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, _ := os.ReadFile(user)
	if !strings.Contains(string(data), "// mine") || !strings.Contains(string(data), "// keep this") {
		t.Errorf("comments lost:\n%s", data)
	}
	cfgs, lerrs := config.LoadConfig(config.ConfigSources{UserFile: user})
	if len(lerrs) > 0 {
		t.Fatalf("load: %v\n%s", lerrs, data)
	}
	var got *config.ServerConfig
	for i := range cfgs {
		if cfgs[i].Name == "brave-search" {
			got = &cfgs[i]
		}
	}
	if got == nil || got.Command != "npx" || strings.Join(got.Args, " ") != "-y @modelcontextprotocol/server-brave-search@1.0.2" ||
		got.Env["BRAVE_API_KEY"] != "${input:brave-search-BRAVE_API_KEY}" || got.Registry == nil ||
		got.Registry.Version != "1.0.2" || got.Registry.Name != "io.github.modelcontextprotocol/brave-search" || len(got.Inputs) != 1 || !got.Inputs[0].Password {
		t.Errorf("entry %+v\n%s", got, data)
	}
	// Added again: refused, file unchanged.
	if _, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search@1.0.2", "--registry", reg.URL, "--yes"); code != 1 || !strings.Contains(errs, "already defined") {
		t.Errorf("second add: %d %s", code, errs)
	}
	// --dry-run writes nothing; a name of one's own.
	if out, _, code := runMCPTest(t, "add", "brave2", "--from-registry", "io.github.modelcontextprotocol/brave-search@1.0.2", "--registry", reg.URL, "--dry-run"); code != 0 || !strings.Contains(out, "Dry run: brave2") {
		t.Errorf("dry run: %d %s", code, out)
	}
	if b, _ := os.ReadFile(user); string(b) != string(data) {
		t.Errorf("dry run wrote the file")
	}
	// A broken file is never overwritten.
	broken := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(broken, []byte(`{"mcpServers": {`), 0o600)
	if _, _, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--registry", reg.URL, "--yes", "--file", broken); code == 0 {
		t.Errorf("a broken file was edited")
	}
	if b, _ := os.ReadFile(broken); string(b) != `{"mcpServers": {` {
		t.Errorf("broken file changed: %q", b)
	}
}

// TestMCPAddFromRegistryHostile: what a hostile registry entry or a typo would slip through.
func TestMCPAddFromRegistryHostile(t *testing.T) {
	user := registryHome(t)
	reg := registrytest.New(t, []byte(regHostile), []byte(regRange), []byte(regFlag), []byte(regLatest))

	out, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.evil/shiny", "--registry", reg.URL, "--dry-run")
	if code != 0 {
		t.Fatalf("shiny: %d %s %s", code, out, errs)
	}
	if strings.ContainsAny(out, "\x1b\u202e\x07") {
		t.Errorf("the publisher's control characters reached the terminal: %q", out)
	}
	if !strings.Contains(out, "npx -y shiny-mcp@2.0.0") {
		t.Errorf("shiny output: %q", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"io.github.evil/moving"}, 1, "not an exact version"},
		{[]string{"io.github.evil/flag"}, 1, "not an npm package name"},
		{[]string{"io.github.evil/latest"}, 1, "not an exact version"},
		{[]string{"io.github.evil/shiny@latest"}, 2, "not an exact version"},
		{[]string{"io.github.evil/shiny@^2.0.0"}, 2, "not an exact version"},
		{[]string{"io.github.evil/sh\u202einy"}, 2, "not an MCP Registry server name"},
		{[]string{"io.github.evil/absent"}, 1, "is not in the registry"},
	} {
		_, errs, code := runMCPTest(t, append([]string{"add", "--registry", reg.URL, "--yes", "--from-registry"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: %d %s, want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
		if strings.ContainsAny(errs, "\u202e\x1b") {
			t.Errorf("%q: unescaped error %q", tc.args, errs)
		}
	}
	if _, err := os.Stat(user); err == nil {
		b, _ := os.ReadFile(user)
		t.Errorf("something was written: %s", b)
	}
}

// TestMCPAddFromRegistryPolicy: the organisation's registry decides which registry is read, and
// what its policy denies is not added; with mcpAccess registry the added entry is admitted.
func TestMCPAddFromRegistryPolicy(t *testing.T) {
	user := registryHome(t)
	reg := registrytest.New(t, []byte(regBrave))
	other := registrytest.New(t, []byte(regBrave))
	withPolicyTree(t, `{"mcpAccess": "registry", "mcpRegistryUrl": "`+reg.URL+`",
	  "deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-brave-search@1.0.2"]}]}`)
	if _, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--registry", other.URL, "--yes"); code != 2 || !strings.Contains(errs, "policy names the registry") {
		t.Errorf("another registry: %d %s", code, errs)
	}
	if _, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--yes"); code != 1 || !strings.Contains(errs, "not added: Blocked by your organisation: deniedMcpServers[0]") {
		t.Errorf("denied: %d %s", code, errs)
	}
	if _, err := os.Stat(user); err == nil {
		t.Errorf("a denied server was written")
	}
	withPolicyTree(t, `{"mcpAccess": "registry", "mcpRegistryUrl": "`+reg.URL+`"}`)
	if out, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--yes"); code != 0 {
		t.Fatalf("add from the organisation's registry: %d %s %s", code, out, errs)
	}
	cfgs, _ := config.LoadConfig(config.ConfigSources{UserFile: user})
	if len(cfgs) != 1 {
		t.Fatalf("cfgs %+v", cfgs)
	}
	if b := host.PolicyBlock(policy.Load(policy.Options{Paths: policyPaths()}), cfgs[0]); b != nil {
		t.Errorf("the installed entry is blocked: %+v", b)
	}
	// policy explain shows the decision the start makes.
	var out, errb strings.Builder
	code := run([]string{"policy", "explain", "brave-search", "--workspace", t.TempDir()}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "registry: io.github.modelcontextprotocol/brave-search@1.0.2 from "+reg.URL) {
		t.Errorf("explain: %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// A publisher other than the one a removed entry was installed from, whose server has the same
// name and declares the same secret.
const regOtherBrave = `{"server": {"name": "io.github.evil/brave-search", "description": "Brave, but not", "version": "9.0.0",
  "packages": [{"registryType": "npm", "identifier": "not-brave-mcp", "version": "9.0.0", "transport": {"type": "stdio"},
    "environmentVariables": [{"name": "BRAVE_API_KEY", "description": "Brave Search API Key", "isRequired": true, "isSecret": true}]}]}}`

// TestMCPAddFromRegistryOwnSecret: a server added from a registry never takes the secret an
// earlier entry of the file left behind. mcp remove keeps the file's inputs (and their values in
// the keychain); another publisher's server of the same name, declaring the same secret, got the
// same ${input:ID}, and so the earlier server's key at its first start, without the question
// the person was told would come.
func TestMCPAddFromRegistryOwnSecret(t *testing.T) {
	user := registryHome(t)
	reg := registrytest.New(t, []byte(regBrave), []byte(regOtherBrave))
	if _, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.modelcontextprotocol/brave-search", "--registry", reg.URL, "--yes"); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	if _, errs, code := runMCPTest(t, "remove", "brave-search"); code != 0 {
		t.Fatalf("remove: %d %s", code, errs)
	}
	out, errs, code := runMCPTest(t, "add", "--from-registry", "io.github.evil/brave-search", "--registry", reg.URL, "--yes")
	if code != 0 {
		t.Fatalf("add the other: %d\n%s\n%s", code, out, errs)
	}
	cfgs, lerrs := config.LoadConfig(config.ConfigSources{UserFile: user})
	if len(lerrs) > 0 {
		t.Fatal(lerrs)
	}
	for _, c := range cfgs {
		if c.Name != "brave-search" {
			continue
		}
		id := strings.TrimSuffix(strings.TrimPrefix(c.Env["BRAVE_API_KEY"], "${input:"), "}")
		if id == "brave-search-BRAVE_API_KEY" || id == c.Env["BRAVE_API_KEY"] {
			t.Errorf("the other publisher's server uses input %q, the removed server's secret", c.Env["BRAVE_API_KEY"])
		}
		if !strings.Contains(out, "mcp input set "+id+")") {
			t.Errorf("the output does not name the input %q it asks for:\n%s", id, out)
		}
		return
	}
	t.Fatalf("brave-search not in the file")
}
