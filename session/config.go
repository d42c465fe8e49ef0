package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Provider types.
const (
	ProviderOpenAI           = "openai"
	ProviderAnthropic        = "anthropic"
	ProviderOpenAICompatible = "openai-compatible"
	ProviderOpenAIResponses  = "openai-responses" // the OpenAI Responses API (reasoning models)
	ProviderScript           = "script"           // tests and editor end-to-end tests only
)

// Defaults per provider type.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultOpenAIKeyEnv     = "OPENAI_API_KEY"
	DefaultOpenAIModel      = "gpt-4.1-mini"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultAnthropicKeyEnv  = "ANTHROPIC_API_KEY"
	DefaultAnthropicModel   = "claude-sonnet-4-5"
	DefaultMaxTokens        = 4096
)

// ProviderConfig selects and configures the model provider. Its JSON shape is
// initializationOptions.provider and the "provider" object of config.json.
type ProviderConfig struct {
	Type      string `json:"type"` // openai (default) | openai-responses | anthropic | openai-compatible | script
	Model     string `json:"model"`
	BaseURL   string `json:"baseURL"`
	APIKeyEnv string `json:"apiKeyEnv"` // the NAME of the environment variable holding the key
	Script    string `json:"script"`    // script file (type script)
	MaxTokens int    `json:"maxTokens,omitempty"`
	// ReasoningEffort is the reasoning effort of reasoning models (openai-responses): minimal, low,
	// medium or high; "" = the API's default.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Prices per model, for the cost in usage reports (optional).
	Prices *Prices `json:"prices,omitempty"`
}

// IsZero reports whether c sets nothing.
func (c ProviderConfig) IsZero() bool { return c == ProviderConfig{} }

// Merge returns c with every non-zero field of over applied on top (editor settings over the
// config file).
func (c ProviderConfig) Merge(over ProviderConfig) ProviderConfig {
	if over.Type != "" && over.Type != c.Type {
		// A different provider type: fields of the old type do not carry over.
		c = ProviderConfig{Type: over.Type, MaxTokens: c.MaxTokens, Prices: c.Prices}
	}
	if over.Model != "" {
		c.Model = over.Model
	}
	if over.BaseURL != "" {
		c.BaseURL = over.BaseURL
	}
	if over.APIKeyEnv != "" {
		c.APIKeyEnv = over.APIKeyEnv
	}
	if over.Script != "" {
		c.Script = over.Script
	}
	if over.MaxTokens != 0 {
		c.MaxTokens = over.MaxTokens
	}
	if over.ReasoningEffort != "" {
		c.ReasoningEffort = over.ReasoningEffort
	}
	if over.Prices != nil {
		c.Prices = over.Prices
	}
	return c
}

// WithDefaults fills in the defaults of c's type (openai when Type is empty) and checks it.
func (c ProviderConfig) WithDefaults() (ProviderConfig, error) {
	if c.Type == "" {
		c.Type = ProviderOpenAI
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if err := c.Prices.check(); err != nil {
		return c, err
	}
	switch c.Type {
	case ProviderOpenAI, ProviderOpenAIResponses:
		if c.BaseURL == "" {
			c.BaseURL = DefaultOpenAIBaseURL
		}
		if c.APIKeyEnv == "" {
			c.APIKeyEnv = DefaultOpenAIKeyEnv
		}
		if c.Model == "" {
			c.Model = DefaultOpenAIModel
		}
	case ProviderAnthropic:
		if c.BaseURL == "" {
			c.BaseURL = DefaultAnthropicBaseURL
		}
		if c.APIKeyEnv == "" {
			c.APIKeyEnv = DefaultAnthropicKeyEnv
		}
		if c.Model == "" {
			c.Model = DefaultAnthropicModel
		}
	case ProviderOpenAICompatible:
		if c.BaseURL == "" {
			return c, errors.New(`session: provider "openai-compatible" needs "baseURL" (for example http://localhost:11434/v1 for Ollama)`)
		}
		if c.Model == "" {
			return c, errors.New(`session: provider "openai-compatible" needs "model"`)
		}
	case ProviderScript:
		if c.Script == "" {
			return c, errors.New(`session: provider "script" needs "script" (the path of the script file)`)
		}
	default:
		return c, fmt.Errorf("session: unknown provider type %q (want openai, openai-responses, anthropic, openai-compatible or script)", c.Type)
	}
	return c, nil
}

// DefaultConfigPath returns $XDG_CONFIG_HOME/switchboard/config.json (~/.config/... when unset).
func DefaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "switchboard", "config.json")
}

// LoadConfigFile reads the provider settings from a config.json of the shape
// {"provider": {...}}. Other top-level keys are ignored (they belong to other parts of the host);
// unknown keys inside "provider" are errors. A missing file returns an error that wraps
// fs.ErrNotExist (callers usually ignore it). Errors name the path.
func LoadConfigFile(path string) (ProviderConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ProviderConfig{}, fmt.Errorf("session: config %w", err) // *PathError names the path
	}
	var top struct {
		Provider json.RawMessage `json:"provider"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return ProviderConfig{}, fmt.Errorf("session: config %s: %w", path, err)
	}
	var c ProviderConfig
	if len(top.Provider) == 0 || string(top.Provider) == "null" {
		return c, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Provider))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return ProviderConfig{}, fmt.Errorf("session: config %s: provider: %w", path, err)
	}
	if c.Type != "" {
		if _, err := c.WithDefaults(); err != nil {
			return ProviderConfig{}, fmt.Errorf("session: config %s: %s", path, strings.TrimPrefix(err.Error(), "session: "))
		}
	}
	return c, nil
}
