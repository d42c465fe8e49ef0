package config

import (
	"encoding/json"
	"strings"
)

// RegistryRef is an entry's "registry": the MCP Registry (v0.1 API) server and exact version the
// entry was made from by `switchboard mcp add --from-registry`. It is a claim, not a proof: an
// organisation's `mcpAccess: "registry"` admits the server only after deriving the launch from
// that registry's server.json again and finding it identical (mcpbridge/mcpregistry.Verify).
type RegistryRef struct {
	// URL is the registry's base URL (https://registry.modelcontextprotocol.io).
	URL string `json:"url"`
	// Name is the server's registry name (io.github.owner/server).
	Name string `json:"name"`
	// Version is the exact version of server.json that was installed.
	Version string `json:"version"`
}

func parseRegistryRef(v json.RawMessage, bad func(key, format string, args ...any)) *RegistryRef {
	var r RegistryRef
	dec := json.NewDecoder(strings.NewReader(string(v)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.URL == "" || r.Name == "" || r.Version == "" {
		bad("registry", `must be {"url", "name", "version"} (written by switchboard mcp add --from-registry)`)
		return nil
	}
	return &r
}
