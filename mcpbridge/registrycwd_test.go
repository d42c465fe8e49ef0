package mcpbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestRegistryEntryRunsOutsideTheRepository: a server installed from a registry (its entry has
// "registry" and, as Verify requires, no cwd) does not run in the host's working folder, which
// is the editor's workspace. There, `npx -y @acme/gh@1.0.0` runs a node_modules/@acme/gh@1.0.0
// the repository ships (and a project .npmrc picks the package registry): the launch the
// organisation's registry admitted would run the repository's code.
func TestRegistryEntryRunsOutsideTheRepository(t *testing.T) {
	repo := t.TempDir()
	t.Chdir(repo) // the host runs from the workspace folder, as editors start it
	out := filepath.Join(t.TempDir(), "cwd")
	cfg := stdioCfg("gh")
	cfg.Command, cfg.Args = "/bin/sh", []string{"-c", `pwd -P > "$0"; exec "$1"`, out, mcptestBin}
	cfg.Registry = &config.RegistryRef{URL: "https://registry.example.com", Name: "io.github.acme/gh", Version: "1.0.0"}
	r := newTestRegistry(t, Options{})
	if st := applyAndWait(t, r, cfg); st["gh"].State != StateReady {
		t.Fatalf("server: %+v", st["gh"])
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if dir := strings.TrimSpace(string(got)); dir != "/" {
		t.Errorf("the registry's server ran in %s, want / (never the workspace %s)", dir, repo)
	}
}
