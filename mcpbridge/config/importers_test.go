package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImportFormats(t *testing.T) {
	type row struct {
		name, skip string
		entry      Entry
		dropped    []string
	}
	for _, tc := range []struct {
		host, file, workspace string
		want                  []row
	}{
		{"claude-code", "claude-code.json", "/work/proj", []row{
			{name: "db", entry: Entry{Command: "db-mcp", Args: []string{"--ro"}, Env: map[string]string{"DB_URL": "${DB_URL}"}}},
			{name: "fs", entry: Entry{Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "${HOME:-/tmp}"}}},
			{name: "github", entry: Entry{Type: "http", URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}}},
		}},
		{"claude-desktop", "claude_desktop_config.json", "", []row{
			{name: "brave", entry: Entry{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search"}, Env: map[string]string{"BRAVE_API_KEY": "literal-key-123"}}},
			{name: "filesystem", entry: Entry{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/u/Desktop"}}},
			{name: "my.server", skip: "must start with a letter or digit"},
		}},
		{"cursor", "cursor-mcp.json", "", []row{
			{name: "notes", entry: Entry{Command: "node", Args: []string{"${userHome}/mcp/notes.js"}, Env: map[string]string{"API_KEY": "${env:NOTES_KEY}"}}},
			{name: "remote", entry: Entry{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:REMOTE_TOKEN}"}}},
		}},
		{"codex", "codex-config.toml", "", []row{
			{name: "bad__name", skip: `must not contain "__"`},
			{name: "context7", entry: Entry{Command: "npx", Args: []string{"-y", "@upstash/context7-mcp"}, Env: map[string]string{"DEBUG": "1", "HTTPS_PROXY": "${env:HTTPS_PROXY}"}, StartupTimeoutSeconds: 20, CallTimeoutSeconds: 90}},
			{name: "figma", entry: Entry{URL: "https://mcp.figma.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:FIGMA_TOKEN}"}, Disabled: true, EnabledTools: []string{"get_code"}}},
		}},
		{"zed", "zed-settings.json", "", []row{
			{name: "old-style", entry: Entry{Command: "/usr/local/bin/mcp-old", Args: []string{"serve"}}},
			{name: "pg", entry: Entry{Command: "postgres-mcp", Args: []string{"--ro"}, Env: map[string]string{"PGHOST": "localhost"}}},
			{name: "you-com", entry: Entry{URL: "https://api.you.com/mcp"}},
		}},
		{"vscode", "vscode-user-mcp.json", "", []row{
			{name: "fetch", entry: Entry{Type: "stdio", Command: "uvx", Args: []string{"mcp-server-fetch"}}, dropped: []string{"dev"}},
			{name: "needs-input", entry: Entry{Type: "stdio", Command: "x", Env: map[string]string{"TOKEN": "${input:tok}"}}},
		}},
	} {
		t.Run(tc.host, func(t *testing.T) {
			ims, err := ImportServers(tc.host, "testdata/configs/"+tc.file, tc.workspace)
			if err != nil {
				t.Fatal(err)
			}
			if len(ims) != len(tc.want) {
				t.Fatalf("got %d servers %+v, want %d", len(ims), ims, len(tc.want))
			}
			for i, w := range tc.want {
				im := ims[i]
				if im.Name != w.name || (w.skip == "") != (im.Skip == "") || !strings.Contains(im.Skip, w.skip) {
					t.Errorf("server %d = %q skip %q, want %q skip %q", i, im.Name, im.Skip, w.name, w.skip)
					continue
				}
				if w.skip != "" {
					continue
				}
				if d := cmp.Diff(w.entry, im.Entry); d != "" {
					t.Errorf("%s entry (-want +got):\n%s", w.name, d)
				}
				if d := cmp.Diff(w.dropped, im.Dropped); d != "" {
					t.Errorf("%s dropped (-want +got):\n%s", w.name, d)
				}
				err := CheckEntry("/u/mcp.json", "", im.Name, im.Entry)
				if wantErr := im.Name == "needs-input"; (err != nil) != wantErr {
					t.Errorf("CheckEntry(%s) = %v", im.Name, err)
				}
			}
		})
	}
}

// TestImportSourcesMarksWorkspaceFiles: the workspace's own files (a repository's) are marked
// Workspace, the user's are not, and the user's come first; a workspace file that is the user's
// own (the workspace is the home folder, or a link to it) is listed once, as the user's.
func TestImportSourcesMarksWorkspaceFiles(t *testing.T) {
	t.Setenv("CODEX_HOME", "")
	home, ws := t.TempDir(), t.TempDir()
	for _, host := range ImportHosts {
		srcs, err := ImportSources(host, home, ws)
		if err != nil {
			t.Fatal(err)
		}
		seenWS := false
		for _, s := range srcs {
			inWS := strings.HasPrefix(s.Path, ws+string(filepath.Separator))
			if s.Workspace != inWS {
				t.Errorf("%s: %s Workspace = %v, want %v", host, s.Path, s.Workspace, inWS)
			}
			if !s.Workspace && seenWS {
				t.Errorf("%s: the user's %s comes after a workspace file", host, s.Path)
			}
			seenWS = seenWS || s.Workspace
		}
		want := map[string]bool{"cursor": true, "codex": true, "zed": true}[host]
		if want != seenWS {
			t.Errorf("%s: workspace file listed = %v, want %v (%+v)", host, seenWS, want, srcs)
		}
		srcs, _ = ImportSources(host, home, "")
		for _, s := range srcs {
			if s.Workspace {
				t.Errorf("%s without a workspace: %+v", host, s)
			}
		}
	}

	// The workspace is the home folder, by its name or through a link.
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err != nil {
		t.Skip(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{home, link} {
		srcs, err := ImportSources("cursor", home, w)
		if err != nil {
			t.Fatal(err)
		}
		if want := []ImportSource{{Path: filepath.Join(home, ".cursor", "mcp.json")}}; !cmp.Equal(srcs, want) {
			t.Errorf("workspace %s: %+v, want %+v", w, srcs, want)
		}
	}
}
