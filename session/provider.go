package session

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/session/anthropic"
	"github.com/switchboard-dev/switchboard/session/llm"
	"github.com/switchboard-dev/switchboard/session/openai"
	"github.com/switchboard-dev/switchboard/session/responses"
	"github.com/switchboard-dev/switchboard/session/script"
)

// The model-facing types. They are defined in the leaf package session/llm so that the provider
// subpackages can implement [Provider] without importing session; session is their consumer and
// the names here are the ones to use.
type (
	Provider   = llm.Provider
	Request    = llm.Request
	Message    = llm.Message
	ToolCall   = llm.ToolCall
	ToolSpec   = llm.ToolSpec
	Chunk      = llm.Chunk
	Usage      = llm.Usage
	Role       = llm.Role
	ChunkKind  = llm.ChunkKind
	RetryRules = llm.Retry
	ModelInfo  = llm.ModelInfo
)

// NewProvider builds the provider cfg describes. getenv looks up the API key variable (nil =
// os.Getenv semantics are the caller's business: pass os.Getenv). client may be nil. A missing API
// key for openai/anthropic is an error that names the variable (wrapping llm.ErrNoAPIKey); for
// openai-compatible the key is optional.
func NewProvider(cfg ProviderConfig, getenv func(string) string, client *http.Client) (Provider, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	key := ""
	if cfg.APIKeyEnv != "" && getenv != nil {
		key = strings.TrimSpace(getenv(cfg.APIKeyEnv))
	}
	switch cfg.Type {
	case ProviderOpenAI, ProviderOpenAICompatible:
		if key == "" && cfg.Type == ProviderOpenAI {
			return nil, fmt.Errorf("session: provider openai: %w: set %s in the environment the editor starts switchboard with, or set provider.apiKeyEnv", llm.ErrNoAPIKey, cfg.APIKeyEnv)
		}
		field := "max_tokens" // what Ollama, llama.cpp, vLLM and LM Studio understand
		if cfg.Type == ProviderOpenAI {
			field = "max_completion_tokens"
		}
		return openai.New(openai.Options{Name: cfg.Type, BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: key,
			MaxTokens: cfg.MaxTokens, MaxTokensField: field, HTTPClient: client}), nil
	case ProviderOpenAIResponses:
		if key == "" {
			return nil, fmt.Errorf("session: provider openai-responses: %w: set %s in the environment the editor starts switchboard with, or set provider.apiKeyEnv", llm.ErrNoAPIKey, cfg.APIKeyEnv)
		}
		return responses.New(responses.Options{BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: key, MaxTokens: cfg.MaxTokens,
			ReasoningEffort: cfg.ReasoningEffort, HTTPClient: client}), nil
	case ProviderAnthropic:
		if key == "" {
			return nil, fmt.Errorf("session: provider anthropic: %w: set %s in the environment the editor starts switchboard with, or set provider.apiKeyEnv", llm.ErrNoAPIKey, cfg.APIKeyEnv)
		}
		return anthropic.New(anthropic.Options{BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: key,
			MaxTokens: cfg.MaxTokens, HTTPClient: client}), nil
	case ProviderScript:
		p, err := script.Load(cfg.Script)
		if err != nil {
			return nil, fmt.Errorf("session: provider script: %w", err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("session: unknown provider type %q", cfg.Type)
}
