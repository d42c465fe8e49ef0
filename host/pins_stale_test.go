package host

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
)

// While a workspace server's definition changes (the window's folders switched to another
// repository, its file was edited), the registry's tools are for a moment still those of the
// definition before: they are compared with nothing and pinned under nothing, or the new
// definition's key would get the old tools as its first-seen pins, and its own tools would then
// read as changed (the CI failure of TestSamplingConsentBoundToDefinition).
func TestComparePinsSkipsAnotherDefinitionsTools(t *testing.T) {
	repoA := config.ServerConfig{Name: "w", Transport: config.TransportStdio, Command: "node", Args: []string{"a.js"}, Folder: "/a", WorkspaceOnly: true}
	repoB := repoA
	repoB.Args, repoB.Folder = []string{"b.js"}, "/b"
	canonical, hash := mcpbridge.CanonicalTool(mcpbridge.ServerIdentity(repoA), "echo", "", "Echo.", json.RawMessage(`{}`), nil, nil)
	tools := []mcpbridge.Tool{{Name: "mcp__w__echo", Server: "w", Tool: "echo", Definition: repoA.Fingerprint(), Canonical: canonical, Hash: hash}}

	changes, first := ComparePins(tools, map[string]config.ServerConfig{"w": repoB}, map[string]permissions.ServerPins{})
	if len(changes) != 0 || len(first) != 0 {
		t.Errorf("repoA's tools under repoB's definition: changes %+v, first seen %+v; want neither", changes, first)
	}
	changes, first = ComparePins(tools, map[string]config.ServerConfig{"w": repoA}, map[string]permissions.ServerPins{})
	if len(changes) != 0 || len(first["w"]) != 1 {
		t.Errorf("repoA's tools under its own definition: changes %+v, first seen %+v; want them first seen", changes, first)
	}
}
