package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// clientMetadataURL is the client ID metadata document URL the suite's authorization servers
// accept without fetching it (auth/basic-cimd). A user configures where they host
// mcpbridge/oauth/oauth-client-metadata.json instead.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// secretVar is the environment variable the pre-registered client's secret is read from: the
// config names it (${env:...}), as a user keeps a secret out of mcp.json.
const secretVar = "SBCONFORMANCE_CLIENT_SECRET"

// oauthEntry is the "oauth" object of an auth scenario's server: the pre-registered client the
// suite hands out (auth/pre-registration), else a client metadata URL (CIMD, with dynamic
// registration as the fallback).
func (e *env) oauthEntry() (map[string]any, error) {
	if !strings.HasPrefix(e.scenario, "auth/") {
		return nil, nil
	}
	var id, secret string
	if raw, ok := e.context["client_id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT client_id: %w", err)
		}
	}
	if raw, ok := e.context["client_secret"]; ok {
		if err := json.Unmarshal(raw, &secret); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT client_secret: %w", err)
		}
	}
	if id == "" {
		return map[string]any{"clientMetadataUrl": clientMetadataURL}, nil
	}
	o := map[string]any{"clientId": id}
	if secret != "" {
		if err := os.Setenv(secretVar, secret); err != nil {
			return nil, err
		}
		o["clientSecret"] = "${env:" + secretVar + "}"
	}
	return o, nil
}
