package session_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/session"
)

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	p := write("ok.json", `{"provider":{"type":"anthropic","model":"claude-x","maxTokens":1000},"other":1}`)
	got, err := session.LoadConfigFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(session.ProviderConfig{Type: "anthropic", Model: "claude-x", MaxTokens: 1000}, got); diff != "" {
		t.Error(diff)
	}
	for name, tc := range map[string]struct{ text, want string }{
		"bad.json":     {`{"provider":`, "bad.json: unexpected end"},
		"unknown.json": {`{"provider":{"typ":"openai"}}`, `unknown.json: provider: json: unknown field "typ"`},
		"type.json":    {`{"provider":{"type":"gemini"}}`, `type.json: unknown provider type "gemini"`},
		"compat.json":  {`{"provider":{"type":"openai-compatible","model":"m"}}`, `needs "baseURL"`},
	} {
		_, err := session.LoadConfigFile(write(name, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: err = %v, want the path and %q", name, err, tc.want)
		}
	}
	_, err = session.LoadConfigFile(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

func TestProviderDefaults(t *testing.T) {
	for _, tc := range []struct {
		in   session.ProviderConfig
		want session.ProviderConfig
	}{
		{session.ProviderConfig{}, session.ProviderConfig{Type: "openai", BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Model: session.DefaultOpenAIModel, MaxTokens: 4096}},
		{session.ProviderConfig{Type: "openai-responses", ReasoningEffort: "low"}, session.ProviderConfig{Type: "openai-responses", BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Model: session.DefaultOpenAIModel, MaxTokens: 4096, ReasoningEffort: "low"}},
		{session.ProviderConfig{Type: "anthropic"}, session.ProviderConfig{Type: "anthropic", BaseURL: "https://api.anthropic.com", APIKeyEnv: "ANTHROPIC_API_KEY", Model: session.DefaultAnthropicModel, MaxTokens: 4096}},
		{session.ProviderConfig{Type: "openai-compatible", BaseURL: "http://localhost:11434/v1", Model: "qwen3"}, session.ProviderConfig{Type: "openai-compatible", BaseURL: "http://localhost:11434/v1", Model: "qwen3", MaxTokens: 4096}},
	} {
		got, err := tc.in.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Error(diff)
		}
	}
	// openai-compatible: the key is optional.
	if _, err := session.NewProvider(session.ProviderConfig{Type: "openai-compatible", BaseURL: "http://x", Model: "m"}, func(string) string { return "" }, nil); err != nil {
		t.Errorf("openai-compatible without key: %v", err)
	}
}

func TestMerge(t *testing.T) {
	file := session.ProviderConfig{Type: "openai", Model: "gpt", APIKeyEnv: "K", MaxTokens: 10}
	got := file.Merge(session.ProviderConfig{Model: "gpt-2"})
	if diff := cmp.Diff(session.ProviderConfig{Type: "openai", Model: "gpt-2", APIKeyEnv: "K", MaxTokens: 10}, got); diff != "" {
		t.Error(diff)
	}
	got = file.Merge(session.ProviderConfig{Type: "script", Script: "/s"})
	if diff := cmp.Diff(session.ProviderConfig{Type: "script", Script: "/s", MaxTokens: 10}, got); diff != "" {
		t.Error(diff)
	}
}

// Prices come from config.json; unknown fields and negative prices are errors.
func TestConfigPrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"provider":{"type":"anthropic","prices":{"claude-x":{"input":3,"cachedInput":0.3,"output":15}}}}`), 0o600)
	c, err := session.LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := c.Prices.For("claude-x"); !ok || p.Input != 3 || p.CachedInput != 0.3 || p.Output != 15 {
		t.Errorf("price = %+v %v", p, ok)
	}
	for _, bad := range []string{
		`{"provider":{"type":"anthropic","prices":{"claude-x":{"input":-1}}}}`,
		`{"provider":{"type":"anthropic","prices":{"claude-x":{"inptu":3}}}}`,
	} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := session.LoadConfigFile(path); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
