package tokenstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Credential is what a sign-in leaves for one server: the client it used and the tokens it got.
// It is a secret as a whole: it goes to a Store and nowhere else (no status, log or frame).
type Credential struct {
	// URL is the server URL the tokens were issued for; they are sent to its origin only, and
	// only while the server's configured URL is still this one.
	URL      string `json:"url"`
	Resource string `json:"resource"` // RFC 8707 resource the tokens are bound to
	Issuer   string `json:"issuer"`

	TokenEndpoint      string `json:"tokenEndpoint"`
	RevocationEndpoint string `json:"revocationEndpoint,omitempty"`
	ClientID           string `json:"clientId"`
	ClientSecret       string `json:"clientSecret,omitempty"`
	AuthMethod         string `json:"authMethod,omitempty"` // none, client_secret_post, client_secret_basic

	AccessToken  string    `json:"accessToken"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	ExpiresAt    time.Time `json:"expiresAt,omitzero"`
}

// ErrNoCredential is what a Store returns for a server nobody signed in to.
var ErrNoCredential = errors.New("mcpbridge: not signed in")

// Store keeps each server's Credential, by server name. Implementations must be safe for
// concurrent use. The keychain and file stores are Keychain and File.
type Store interface {
	Load(ctx context.Context, server string) (Credential, error) // ErrNoCredential when there is none
	Save(ctx context.Context, server string, c Credential) error
	Delete(ctx context.Context, server string) error // no error when there is none
}

// Memory keeps credentials in memory (tests, `switchboard call` without a keychain).
type Memory struct {
	mu    sync.Mutex
	creds map[string]Credential
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{creds: map[string]Credential{}}
}

func (m *Memory) Load(_ context.Context, server string) (Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.creds[server]
	if !ok {
		return Credential{}, ErrNoCredential
	}
	return c, nil
}

func (m *Memory) Save(_ context.Context, server string, c Credential) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creds[server] = c
	return nil
}

func (m *Memory) Delete(_ context.Context, server string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.creds, server)
	return nil
}
