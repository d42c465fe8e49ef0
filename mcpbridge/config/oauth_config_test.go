package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad oauth values name the key and say what is wanted.
func TestParseOAuthURLs(t *testing.T) {
	for _, tc := range []struct{ entry, key, want string }{
		{`{"clientMetadataUrl": "http://example.com/c.json"}`, "oauth.clientMetadataUrl", "https URL with a path"},
		{`{"clientMetadataUrl": "https://example.com"}`, "oauth.clientMetadataUrl", "https URL with a path"},
		{`{"issuer": "not a url"}`, "oauth.issuer", "issuer URL"},
		{`{"issuer": 3}`, "oauth.issuer", "wrong type"},
	} {
		var got []string
		parseOAuth(json.RawMessage(tc.entry), func(key, format string, args ...any) {
			got = append(got, key+": "+format)
		})
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.key+": ") || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s: errors %q, want one for %s saying %q", tc.entry, got, tc.key, tc.want)
		}
	}
	var got []string
	o := parseOAuth(json.RawMessage(`{"clientMetadataUrl": "https://example.com/switchboard/c.json", "issuer": "https://auth.example.com"}`),
		func(key, format string, args ...any) { got = append(got, key) })
	if len(got) != 0 || o.ClientMetadataURL != "https://example.com/switchboard/c.json" || o.Issuer != "https://auth.example.com" {
		t.Errorf("good entry: errors %v, settings %+v", got, o)
	}
}

// An oauth.clientSecret taken from the environment is a secret like a header's: the trust
// question of a workspace server says which variable goes there (a workspace file could otherwise
// read GITHUB_TOKEN into a secret it sends to an authorization server of its choosing), and logs
// and statuses never show its value.
func TestClientSecretFromEnvironment(t *testing.T) {
	c := ServerConfig{Name: "remote", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp",
		OAuth: &OAuthSettings{ClientID: "id", ClientSecret: "${env:GITHUB_TOKEN}"}}
	if got := strings.Join(TrustSentences(c, nil), " "); !strings.Contains(got, "GITHUB_TOKEN into oauth.clientSecret") {
		t.Errorf("trust question %q does not say GITHUB_TOKEN goes into oauth.clientSecret", got)
	}
	const value = "ghp_the-real-token-123456"
	getenv := func(k string) (string, bool) { return value, k == "GITHUB_TOKEN" }
	if got := c.Redact("token endpoint said: bad client_secret "+value, getenv); strings.Contains(got, value) {
		t.Errorf("Redact left the secret in: %q", got)
	}
}

// A repository's file cannot send a client secret to an authorization server the trust question
// does not name: with oauth.clientSecret it must say oauth.issuer, and the question shows it.
func TestWorkspaceClientSecretNeedsIssuer(t *testing.T) {
	ws := t.TempDir()
	entry := func(issuer string) string {
		o := `"clientId": "id", "clientSecret": "${env:GITHUB_TOKEN}"`
		if issuer != "" {
			o += `, "issuer": "` + issuer + `"`
		}
		return `{"mcpServers": {"remote": {"url": "https://mcp.example.com/mcp", "oauth": {` + o + `}}}}`
	}
	load := func(body string) ([]ServerConfig, []error) {
		if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadConfig(ConfigSources{UserFile: filepath.Join(ws, "none.json"), WorkspaceFolders: []string{ws}, Getenv: func(string) (string, bool) { return "", false }})
	}
	cfgs, errs := load(entry(""))
	var ce *ConfigError
	if len(cfgs) != 0 || len(errs) != 1 || !errors.As(errs[0], &ce) || ce.Key != "oauth.issuer" || !strings.Contains(ce.Msg, "clientSecret") {
		t.Fatalf("a workspace secret without an issuer: %d servers, errors %v; want it refused at oauth.issuer", len(cfgs), errs)
	}
	cfgs, errs = load(entry("https://auth.example.com"))
	if len(cfgs) != 1 || len(errs) != 0 {
		t.Fatalf("with an issuer: %d servers, errors %v; want it loaded", len(cfgs), errs)
	}
	if got := strings.Join(TrustSentences(cfgs[0], nil), " "); !strings.Contains(got, "sent only to the authorization server https://auth.example.com") {
		t.Errorf("trust question %q does not name where the secret goes", got)
	}
	// The user's own file may leave it to the first sign-in (bound to that issuer from then on).
	user := filepath.Join(ws, "user.json")
	if err := os.WriteFile(user, []byte(entry("")), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfgs, errs := LoadConfig(ConfigSources{UserFile: user, Getenv: func(string) (string, bool) { return "", false }}); len(cfgs) != 1 || len(errs) != 0 {
		t.Errorf("the user's own file: %d servers, errors %v; want it loaded", len(cfgs), errs)
	}
}
