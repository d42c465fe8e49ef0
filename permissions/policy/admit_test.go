package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mem builds a policy from one Switchboard managed-settings.json and optional more sources.
func mem(t *testing.T, settings string, more ...MemSource) *Policy {
	t.Helper()
	srcs := []MemSource{{Path: "/etc/switchboard/managed-settings.json", Data: []byte(settings)}}
	p := FromSources(noLookPath, append(srcs, more...)...)
	if err := p.Broken(); err != nil {
		t.Fatalf("policy broken: %v", err)
	}
	return p
}

func noLookPath(name string) (string, error) { return "", os.ErrNotExist }

// fakeBin makes an executable file named name in dir and returns its path.
func fakeBin(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func stdio(name, cmd, path string, args ...string) Launch {
	return Launch{Name: name, Scope: ScopeUser, Transport: "stdio", Command: cmd, Path: path, Args: args}
}

func fromRegistry(l Launch, ok, why string) Launch {
	l.Registry, l.RegistryErr = ok, why
	return l
}

func remote(name, url string) Launch {
	return Launch{Name: name, Scope: ScopeUser, Transport: "http", URL: url}
}

// TestAdmit is the table of server admission, with the attacker's launches.
func TestAdmit(t *testing.T) {
	bin := t.TempDir()
	npx := fakeBin(t, filepath.Join(bin, "usr"), "npx")
	copyNpx := fakeBin(t, filepath.Join(bin, "home", "evil"), "npx") // another npx, elsewhere
	link := filepath.Join(bin, "home", "evil", "innocent")
	if err := os.Symlink(npx, link); err != nil {
		t.Fatal(err)
	}
	other := fakeBin(t, filepath.Join(bin, "home", "evil"), "server")
	envBin := fakeBin(t, filepath.Join(bin, "usr"), "env")
	envLink := filepath.Join(bin, "home", "evil", "launch")
	if err := os.Symlink(envBin, envLink); err != nil {
		t.Fatal(err)
	}
	look := func(name string) (string, error) {
		if name == "npx" {
			return npx, nil
		}
		return "", os.ErrNotExist
	}
	build := func(settings string, more ...MemSource) *Policy {
		srcs := []MemSource{{Path: "/etc/switchboard/managed-settings.json", Data: []byte(settings)}}
		p := FromSources(look, append(srcs, more...)...)
		if err := p.Broken(); err != nil {
			t.Fatalf("policy broken: %v", err)
		}
		return p
	}
	const denyFS = `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/"]}]}`
	const allowGH = `{"allowedMcpServers": [
		{"serverName": "github"},
		{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-github"]},
		{"serverUrl": "https://*.example.com/*"}
	]}`
	fsArgs := []string{"-y", "@modelcontextprotocol/server-filesystem", "/"}
	ghArgs := []string{"-y", "@modelcontextprotocol/server-github"}
	cases := []struct {
		name     string
		settings string
		more     []MemSource
		launch   Launch
		allowed  bool
		ptr      string // the deciding rule's pointer
	}{
		{"no policy keys", `{}`, nil, stdio("fs", "npx", npx, fsArgs...), true, ""},
		{"deny by command", denyFS, nil, stdio("fs", "npx", npx, fsArgs...), false, "/deniedMcpServers/0"},
		{"deny needs the exact argument list", denyFS, nil, stdio("fs", "npx", npx, "-y", "@modelcontextprotocol/server-filesystem", "/home"), true, ""},
		// ${env:TOOL} resolved to another copy of npx: the rule names the program, not a path.
		{"attack: env template resolving to a copy of the denied command", denyFS, nil, stdio("fs", copyNpx, copyNpx, fsArgs...), false, "/deniedMcpServers/0"},
		{"attack: symlink with another name to the denied command", denyFS, nil, stdio("fs", link, link, fsArgs...), false, "/deniedMcpServers/0"},
		{"attack: full path of the denied command", denyFS, nil, stdio("fs", npx, npx, fsArgs...), false, "/deniedMcpServers/0"},
		{"attack: unresolvable command spelled like the rule", denyFS, nil, stdio("fs", "npx", "", fsArgs...), false, "/deniedMcpServers/0"},
		// The same package run the same way, spelled otherwise: npx assumes --yes without a
		// terminal, takes a version after the name, and env or sh -c can start it.
		{"attack: deny by command dodged by leaving out -y", denyFS, nil, stdio("fs", "npx", npx, "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by --yes", denyFS, nil, stdio("fs", "npx", npx, "--yes", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by @latest", denyFS, nil, stdio("fs", "npx", npx, "-y", "@modelcontextprotocol/server-filesystem@latest", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by a version", denyFS, nil, stdio("fs", "npx", npx, "-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by env", denyFS, nil, stdio("fs", "env", "/usr/bin/env", "FOO=1", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by sh -c", denyFS, nil, stdio("fs", "sh", "/bin/sh", "-c", "exec npx -y @modelcontextprotocol/server-filesystem /"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by env -S", denyFS, nil, stdio("fs", "/usr/bin/env", "/usr/bin/env", "-S", "npx -y @modelcontextprotocol/server-filesystem@1.0.0", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by bash -lc and env", denyFS, nil, stdio("fs", "bash", "/bin/bash", "-lc", "env -i npx @modelcontextprotocol/server-filesystem /"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by npx's --", denyFS, nil, stdio("fs", "npx", npx, "--", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by sh -o pipefail -c", denyFS, nil, stdio("fs", "bash", "/bin/bash", "-o", "pipefail", "-c", "npx -y @modelcontextprotocol/server-filesystem /"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by sh +e -c", denyFS, nil, stdio("fs", "sh", "/bin/sh", "+e", "-c", "npx -y @modelcontextprotocol/server-filesystem /"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by nice", denyFS, nil, stdio("fs", "nice", "/usr/bin/nice", "-n", "5", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by nohup and timeout", denyFS, nil, stdio("fs", "nohup", "/usr/bin/nohup", "timeout", "-k", "5", "1d", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by stdbuf and setsid", denyFS, nil, stdio("fs", "stdbuf", "/usr/bin/stdbuf", "-oL", "-e", "0", "setsid", "-w", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by taskset -c", denyFS, nil, stdio("fs", "taskset", "/usr/bin/taskset", "-c", "0,1", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by npm exec", denyFS, nil, stdio("fs", "npm", "/usr/bin/npm", "exec", "--yes", "@modelcontextprotocol/server-filesystem", "--", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by sh -c nice npm x", denyFS, nil, stdio("fs", "sh", "/bin/sh", "-c", "nice -10 npm x -y @modelcontextprotocol/server-filesystem@latest /"), false, "/deniedMcpServers/0"},
		{"a deny by command leaves another package run through nice", denyFS, nil, stdio("fs", "nice", "/usr/bin/nice", "npx", "-y", "@modelcontextprotocol/server-github"), true, ""},
		{"a deny by command leaves npm's other commands", denyFS, nil, stdio("fs", "npm", "/usr/bin/npm", "run", "@modelcontextprotocol/server-filesystem", "/"), true, ""},
		{"a deny naming a version leaves other versions", `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.0", "/"]}]}`, nil, stdio("fs", "npx", npx, "-y", "@modelcontextprotocol/server-filesystem@1.0.1", "/"), true, ""},
		{"a deny naming a version holds that version without -y", `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.0", "/"]}]}`, nil, stdio("fs", "npx", npx, "@modelcontextprotocol/server-filesystem@1.0.0", "/"), false, "/deniedMcpServers/0"},
		{"attack: an allow by command is not met through env", allowGH, nil, stdio("gh", "env", "/usr/bin/env", "npx", "-y", "@modelcontextprotocol/server-github"), false, "/allowedMcpServers"},
		{"attack: deny by command dodged by a link with another name to env", denyFS, nil, stdio("fs", envLink, envLink, "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"a deny by command leaves another package", denyFS, nil, stdio("fs", "npx", npx, "-y", "@modelcontextprotocol/server-filesystem-extra", "/"), true, ""},
		{"a deny by command leaves another package run through env", denyFS, nil, stdio("fs", "env", "/usr/bin/env", "npx", "-y", "@modelcontextprotocol/server-github"), true, ""},
		// npx -p/--package installs the package and runs a command with it (its own binary, or any
		// other: installing it already ran its scripts); uvx --from and --with the same.
		{"attack: deny by command dodged by npx -p", denyFS, nil, stdio("fs", "npx", npx, "-p", "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by npx --package=", denyFS, nil, stdio("fs", "npx", npx, "-y", "--package=@modelcontextprotocol/server-filesystem@latest", "mcp-server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by npx --package and another package", denyFS, nil, stdio("fs", "npx", npx, "--package", "left-pad", "--package", "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"attack: deny by command dodged by npm exec --package", denyFS, nil, stdio("fs", "npm", "/usr/bin/npm", "exec", "--package=@modelcontextprotocol/server-filesystem", "--", "mcp-server-filesystem", "/"), false, "/deniedMcpServers/0"},
		{"a deny by command leaves npx -p with another package", denyFS, nil, stdio("fs", "npx", npx, "-p", "@modelcontextprotocol/server-github", "mcp-server-github", "/"), true, ""},
		{"a deny by command leaves npx -p with the package and other arguments", denyFS, nil, stdio("fs", "npx", npx, "-p", "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", "/home"), true, ""},
		{"attack: deny of a uvx package dodged by --from", `{"deniedMcpServers": [{"serverCommand": ["uvx", "mcp-server-fetch"]}]}`, nil, stdio("f", "uvx", "", "--from", "mcp-server-fetch==2025.1.1", "mcp-server-fetch"), false, "/deniedMcpServers/0"},
		{"attack: deny of a uvx package dodged by --with", `{"deniedMcpServers": [{"serverCommand": ["uvx", "mcp-server-fetch"]}]}`, nil, stdio("f", "uvx", "", "--with=mcp-server-fetch", "other-server"), false, "/deniedMcpServers/0"},
		{"a deny naming -p and a version holds that version", `{"deniedMcpServers": [{"serverCommand": ["npx", "-p", "evil@1.0.0", "evil-bin"]}]}`, nil, stdio("e", "npx", npx, "--package=evil@1.0.0", "evil-bin"), false, "/deniedMcpServers/0"},
		{"a deny naming -p and a version leaves other versions", `{"deniedMcpServers": [{"serverCommand": ["npx", "-p", "evil@1.0.0", "evil-bin"]}]}`, nil, stdio("e", "npx", npx, "--package=evil@1.0.1", "evil-bin"), true, ""},
		{"deny by name, any case", `{"deniedMcpServers": [{"serverName": "shell"}]}`, nil, stdio("Shell", "sh", "/bin/sh"), false, "/deniedMcpServers/0"},
		{"deny by URL, host in another case and default port", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "HTTPS://user@EVIL.example:443/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by percent-encoding the path", `{"deniedMcpServers": [{"serverUrl": "https://mcp.example.com/admin*"}]}`, nil, remote("x", "https://mcp.example.com/%61dmin/x"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by a trailing dot on the host", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "https://evil.example./mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by a trailing dot before the port", `{"deniedMcpServers": [{"serverUrl": "https://evil.example:8443/*"}]}`, nil, remote("x", "https://evil.example.:8443/mcp"), false, "/deniedMcpServers/0"},
		// Go's HTTP transport maps a Unicode host name (width, case, dots) to the ASCII one it
		// dials: ｅｖｉｌ.example is evil.example on the wire.
		{"attack: deny by URL dodged by a fullwidth host", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "https://\uff45\uff56\uff49\uff4c.example/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by an ideographic full stop", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "https://evil\uff61example/mcp"), false, "/deniedMcpServers/0"},
		// Go's URL parser decodes %-escapes of non-ASCII bytes in a host: %EF%BD%85 is the
		// fullwidth e, and the transport dials evil.example.
		{"attack: deny by URL dodged by a percent-encoded fullwidth host", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "https://%EF%BD%85vil.example/mcp"), false, "/deniedMcpServers/0"},
		{"a URL allowlist admits ASCII host names only", allowGH, nil, remote("api", "https://\uff4d\uff43\uff50.example.com/v1"), false, "/allowedMcpServers"},
		{"a deny by URL leaves other ASCII hosts", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "https://good.example/mcp"), true, ""},
		{"attack: deny by URL dodged by another spelling of an IPv6 address", `{"deniedMcpServers": [{"serverUrl": "http://[::1]:8080/*"}]}`, nil, remote("x", "http://[0:0:0:0:0:0:0:1]:8080/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by an IPv4-mapped IPv6 address", `{"deniedMcpServers": [{"serverUrl": "http://10.0.0.1/*"}]}`, nil, remote("x", "http://[::ffff:10.0.0.1]/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by an IPv4-mapped address in hex", `{"deniedMcpServers": [{"serverUrl": "http://10.0.0.1/*"}]}`, nil, remote("x", "http://[::ffff:0a00:0001]/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL dodged by a port with leading zeros", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, remote("x", "https://evil.example:0443/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL and port dodged by leading zeros", `{"deniedMcpServers": [{"serverUrl": "http://evil.example:8080/*"}]}`, nil, remote("x", "http://evil.example:008080/mcp"), false, "/deniedMcpServers/0"},
		// Sent as written; a server that cleans its paths (Go's ServeMux, most routers) serves /admin.
		{"attack: deny by URL path dodged by a dot segment", `{"deniedMcpServers": [{"serverUrl": "https://mcp.example.com/admin*"}]}`, nil, remote("x", "https://mcp.example.com/x/../admin/mcp"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL path dodged by a doubled slash", `{"deniedMcpServers": [{"serverUrl": "https://mcp.example.com/admin*"}]}`, nil, remote("x", "https://mcp.example.com//admin"), false, "/deniedMcpServers/0"},
		{"attack: deny by URL path dodged by an encoded dot segment", `{"deniedMcpServers": [{"serverUrl": "https://mcp.example.com/admin*"}]}`, nil, remote("x", "https://mcp.example.com/%2e/admin"), false, "/deniedMcpServers/0"},
		{"allow by URL path", `{"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/public/*"}]}`, nil, remote("x", "https://mcp.example.com/public/mcp"), true, ""},
		// A path with %-escapes the rule writes the same way (a space, a colon in a tenant's name).
		{"attack: deny by URL path with %-escapes dodged by encoding another letter", `{"deniedMcpServers": [{"serverUrl": "https://mcp.example.com/teams/a%20b/*"}]}`, nil, remote("x", "https://mcp.example.com/teams/%61%20b/mcp"), false, "/deniedMcpServers/0"},
		{"allow by URL path with %-escapes", `{"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/teams/a%20b/*"}]}`, nil, remote("x", "https://mcp.example.com/teams/a%20b/mcp"), true, ""},
		{"attack: allow by URL path with %-escapes left by a dot segment", `{"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/teams/a%20b/*"}]}`, nil, remote("x", "https://mcp.example.com/teams/a%20b/../../admin"), false, "/allowedMcpServers"},
		{"attack: allow by URL path left by a dot segment", `{"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/public/*"}]}`, nil, remote("x", "https://mcp.example.com/public/../admin"), false, "/allowedMcpServers"},
		{"attack: allow by URL path left by an encoded dot segment", `{"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/public/*"}]}`, nil, remote("x", "https://mcp.example.com/public/%2e%2e/admin"), false, "/allowedMcpServers"},
		{"deny by URL does not touch stdio", `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}]}`, nil, stdio("x", "npx", npx), true, ""},
		{"allow: listed command", allowGH, nil, stdio("gh", "npx", npx, ghArgs...), true, ""},
		{"allow: the name is not enough for stdio when commands are listed", allowGH, nil, stdio("github", "npx", npx, fsArgs...), false, "/allowedMcpServers"},
		// A workspace file names its server "github" like the allowed one but runs its own program.
		{"attack: workspace server named like the allowed one", allowGH, nil, Launch{Name: "github", Scope: ScopeWorkspace, Transport: "stdio", Command: other, Path: other, Args: ghArgs}, false, "/allowedMcpServers"},
		{"attack: allowed command found on a PATH the server's env changed", allowGH, nil, stdio("gh", "npx", copyNpx, ghArgs...), false, "/allowedMcpServers"},
		{"attack: allowed command whose env loads other code", allowGH, nil, func() Launch { l := stdio("gh", "npx", npx, ghArgs...); l.CodeEnv = []string{"NODE_OPTIONS"}; return l }(), false, "/allowedMcpServers"},
		{"attack: allowed package runner run inside a folder", allowGH, nil, func() Launch { l := stdio("gh", "npx", npx, ghArgs...); l.RunnerDir = "/home/u/repo"; return l }(), false, "/allowedMcpServers"},
		{"a deny by command holds whatever the env", denyFS, nil, func() Launch { l := stdio("fs", "npx", npx, fsArgs...); l.CodeEnv = []string{"PATH"}; return l }(), false, "/deniedMcpServers/0"},
		{"allow: URL wildcard", allowGH, nil, remote("api", "https://mcp.example.com/v1"), true, ""},
		{"attack: URL wildcard cannot reach past the host", allowGH, nil, remote("api", "https://evil.test/x.example.com/v1"), false, "/allowedMcpServers"},
		{"attack: URL with the allowed host as user info", allowGH, nil, remote("api", "https://mcp.example.com@evil.test/v1"), false, "/allowedMcpServers"},
		{"empty allowlist blocks everything", `{"allowedMcpServers": []}`, nil, stdio("gh", "npx", npx, ghArgs...), false, "/allowedMcpServers"},
		{"name-only allowlist admits by name", `{"allowedMcpServers": [{"serverName": "github"}]}`, nil, stdio("github", "x", other), true, ""},
		{"allowManagedMcpServersOnly without an allowlist", `{"allowManagedMcpServersOnly": true}`, nil, stdio("gh", "npx", npx, ghArgs...), false, "/allowManagedMcpServersOnly"},
		{"mcpAccess none", `{"mcpAccess": "none"}`, nil, stdio("gh", "npx", npx, ghArgs...), false, "/mcpAccess"},
		{"mcpAccess registry: not installed from it", `{"mcpAccess": "registry"}`, nil, stdio("gh", "npx", npx, ghArgs...), false, "/mcpAccess"},
		{"mcpAccess registry: the registry's launch", `{"mcpAccess": "registry"}`, nil, fromRegistry(stdio("gh", "npx", npx, ghArgs...), "io.github.acme/gh@1.0.0 from https://r.example.com", ""), true, ""},
		{"attack: mcpAccess registry, hand-edited entry", `{"mcpAccess": "registry"}`, nil, fromRegistry(stdio("gh", "npx", npx, ghArgs...), "", "gh differs from io.github.acme/gh@1.0.0 in the registry (command line)"), false, "/mcpAccess"},
		{"mcpAccess registry and an allowlist: both", `{"mcpAccess": "registry", "allowedMcpServers": [{"serverName": "jira"}]}`, nil, fromRegistry(stdio("gh", "npx", npx, ghArgs...), "io.github.acme/gh@1.0.0 from https://r.example.com", ""), false, "/allowedMcpServers"},
		{"VS Code ChatMCP registry", `{}`, []MemSource{{Path: "/etc/vscode/policy.json", From: FromVSCode, Kind: KindVSCode, Data: []byte(`{"ChatMCP": "registry"}`)}}, stdio("gh", "npx", npx), false, "/ChatMCP"},
		{"workspaceServers deny", `{"workspaceServers": "deny"}`, nil, Launch{Name: "w", Scope: ScopeWorkspace, Transport: "stdio", Command: "npx", Path: npx}, false, "/workspaceServers"},
		{"workspaceServers deny leaves user servers", `{"workspaceServers": "deny"}`, nil, stdio("w", "npx", npx), true, ""},
		{"Claude Code deny list is imported", `{}`, []MemSource{{Path: "/etc/claude-code/managed-settings.json", From: FromClaudeCode, Data: []byte(denyFS)}}, stdio("fs", "npx", npx, fsArgs...), false, "/deniedMcpServers/0"},
		{"inheritPolicies false drops the import", `{"inheritPolicies": false}`, []MemSource{{Path: "/etc/claude-code/managed-settings.json", From: FromClaudeCode, Data: []byte(denyFS)}}, stdio("fs", "npx", npx, fsArgs...), true, ""},
		{"Claude Code allowlist narrows ours", allowGH, []MemSource{{Path: "/etc/claude-code/managed-settings.json", From: FromClaudeCode, Data: []byte(`{"allowedMcpServers": [{"serverName": "jira"}]}`)}}, stdio("gh", "npx", npx, ghArgs...), false, "/allowedMcpServers"},
		{"VS Code ChatMCP none", `{}`, []MemSource{{Path: "/etc/vscode/policy.json", From: FromVSCode, Kind: KindVSCode, Data: []byte(`{"ChatMCP": "none"}`)}}, stdio("gh", "npx", npx), false, "/ChatMCP"},
		{"most restrictive mcpAccess wins", `{"mcpAccess": "all"}`, []MemSource{{Path: "/etc/vscode/policy.json", From: FromVSCode, Kind: KindVSCode, Data: []byte(`{"ChatMCP": false}`)}}, stdio("gh", "npx", npx), false, "/ChatMCP"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := build(tc.settings, tc.more...)
			d := p.Admit(tc.launch)
			if d.Allowed != tc.allowed {
				t.Fatalf("Admit(%+v).Allowed = %v, want %v; reason %q, chain %+v", tc.launch, d.Allowed, tc.allowed, d.Reason, d.Chain)
			}
			if tc.allowed {
				return
			}
			if got := d.Rule.Pointer; got != tc.ptr {
				t.Errorf("deciding rule %s, want pointer %s", d.Rule.Loc(), tc.ptr)
			}
			if d.Message == "" || !strings.Contains(d.Message, d.Rule.File) {
				t.Errorf("message %q does not name the file %s", d.Message, d.Rule.File)
			}
		})
	}
}

// TestManagedMCP: managed-mcp.json is exclusive; its servers start (Launch.Managed) and still
// pass the deny lists; a user server named like a managed one does not; an empty map is no MCP.
func TestManagedMCP(t *testing.T) {
	const file = "/etc/switchboard/managed-mcp.json"
	mcp := MemSource{Path: file, Kind: KindMCP, Data: []byte(`{"mcpServers": {
		"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "ghp_literal", "OK": "${env:OK}"}},
		"shell": {"command": "bash"}
	}}`)}
	p := mem(t, `{"deniedMcpServers": [{"serverName": "shell"}]}`, mcp)
	if w := strings.Join(p.Warnings(), "\n"); !strings.Contains(w, "env GITHUB_TOKEN holds a literal value") || strings.Contains(w, "env OK") {
		t.Errorf("warnings about literal secrets: %s", w)
	}
	if got := len(p.ManagedServers()); got != 2 {
		t.Fatalf("ManagedServers: %d, want 2", got)
	}
	managed := Launch{Name: "github", Scope: ScopeManaged, Managed: file, Transport: "stdio", Command: "npx", Path: "/usr/bin/npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}}
	if d := p.Admit(managed); !d.Allowed || !d.Exclusive || d.Word() != "exclusive" {
		t.Errorf("managed github: %+v", d)
	}
	user := managed
	user.Scope, user.Managed = ScopeUser, ""
	if d := p.Admit(user); d.Allowed || d.Rule.File != file {
		t.Errorf("user server named like a managed one: %+v", d)
	}
	shell := Launch{Name: "shell", Scope: ScopeManaged, Managed: file, Transport: "stdio", Command: "bash"}
	if d := p.Admit(shell); d.Allowed || d.Rule.Pointer != "/deniedMcpServers/0" {
		t.Errorf("managed but denied: %+v", d)
	}
	off := mem(t, `{}`, MemSource{Path: file, Kind: KindMCP, Data: []byte(`{"mcpServers": {}}`)})
	if d := off.Admit(user); d.Allowed {
		t.Errorf("empty managed-mcp.json admitted %+v", d)
	}
	// Claude Code's managed-mcp.json narrows ours: a server must be in both, the same way.
	cc := MemSource{Path: "/etc/claude-code/managed-mcp.json", From: FromClaudeCode, Kind: KindMCP,
		Data: []byte(`{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "ghp_literal", "OK": "${env:OK}"}}}}`)}
	both := mem(t, `{}`, mcp, cc)
	if got := both.ManagedServers(); len(got) != 1 || got[0].Name != "github" {
		t.Errorf("ManagedServers with both files: %+v", got)
	}
}

// TestMessage: the person's sentence names the rule, the file and the contact, and escapes what
// it quotes.
func TestMessage(t *testing.T) {
	p := mem(t, `{"deniedMcpServers": [{"serverName": "shell"}], "adminContact": {"email": "it@example.com\u202e", "url": "https://wiki.example.com/ai"}}`)
	d := p.Admit(stdio("shell", "sh", "/bin/sh"))
	want := `Blocked by your organisation: deniedMcpServers[0] {"serverName":"shell"} in /etc/switchboard/managed-settings.json:1:23. Contact it@example.com\u202e (https://wiki.example.com/ai).`
	if d.Message != want {
		t.Errorf("message\n got %s\nwant %s", d.Message, want)
	}
	if d.Rule.Loc() != "/etc/switchboard/managed-settings.json#/deniedMcpServers/0" {
		t.Errorf("Loc = %s", d.Rule.Loc())
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		ok   bool
	}{
		{"a*b", "ab", true}, {"a*b", "axxb", true}, {"a*b", "axxbc", false}, {"*", "", true},
		{"a*b*c", "abbbc", true}, {"a*b*c", "acb", false}, {"", "", true}, {"", "x", false},
	} {
		if got := glob(tc.p, tc.s); got != tc.ok {
			t.Errorf("glob(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

// TestAdmitUnicodeHost: a URL whose host is not plain ASCII, under a serverUrl deny, is blocked
// with a sentence saying what to write instead; a serverUrl pattern with such a host is warned
// about (it never matches an address, which the transport dials in ASCII).
func TestAdmitUnicodeHost(t *testing.T) {
	p := mem(t, `{"deniedMcpServers": [{"serverUrl": "https://evil.example/*"}, {"serverUrl": "https://b\u00fccher.example/*"}]}`)
	d := p.Admit(remote("x", "https://\uff45\uff56\uff49\uff4c.example/mcp"))
	if d.Allowed || !strings.Contains(d.Message, "xn--") || !strings.Contains(d.Reason, "not plain ASCII") {
		t.Errorf("Admit = %+v, want blocked saying the host must be written in ASCII", d)
	}
	if w := strings.Join(p.Warnings(), "\n"); !strings.Contains(w, "/deniedMcpServers/1") || !strings.Contains(w, "xn--") || strings.Contains(w, "/deniedMcpServers/0 ") {
		t.Errorf("warnings:\n%s", w)
	}
}
