package mcpbridge

import (
	"context"
	"errors"
	"sync"
	"time"
)

// OAuthSettings is a server entry's "oauth" object: a client registered by hand with the
// authorization server, for servers that offer no dynamic client registration, or the URL of
// Switchboard's client metadata document (CIMD), and the scopes and callback port.
type OAuthSettings struct {
	ClientID string `json:"clientId,omitempty"`
	// ClientSecret may hold ${env:X} and ${input:ID} references; they are resolved when the
	// sign-in runs. It is sent to the token endpoint of the authorization server the client was
	// registered with (Issuer, else the issuer of the first sign-in) and nowhere else.
	ClientSecret string `json:"clientSecret,omitempty"`
	// ClientMetadataURL is where the client ID metadata document is hosted (https); it is the
	// client_id at authorization servers that advertise client_id_metadata_document_supported.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// Issuer, when set, is the only authorization server this entry signs in with.
	Issuer string   `json:"issuer,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	// CallbackPort is the loopback port of the redirect URI (0 = an ephemeral one).
	CallbackPort int `json:"callbackPort,omitempty"`
}

// Credential is what a sign-in leaves for one server: the client it used and the tokens it got.
// It is a secret as a whole: it goes to a TokenStore and nowhere else (no status, log or frame).
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

// ErrNoCredential is what a TokenStore returns for a server nobody signed in to.
var ErrNoCredential = errors.New("mcpbridge: not signed in")

// TokenStore keeps each server's Credential, by server name. Implementations must be safe for
// concurrent use. The keychain and file stores are in package mcpbridge/tokenstore.
type TokenStore interface {
	Load(ctx context.Context, server string) (Credential, error) // ErrNoCredential when there is none
	Save(ctx context.Context, server string, c Credential) error
	Delete(ctx context.Context, server string) error // no error when there is none
}

// MemoryTokenStore keeps credentials in memory (tests, `switchboard call` without a keychain).
type MemoryTokenStore struct {
	mu    sync.Mutex
	creds map[string]Credential
}

// NewMemoryTokenStore returns an empty store.
func NewMemoryTokenStore() *MemoryTokenStore {
	return &MemoryTokenStore{creds: map[string]Credential{}}
}

func (m *MemoryTokenStore) Load(_ context.Context, server string) (Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.creds[server]
	if !ok {
		return Credential{}, ErrNoCredential
	}
	return c, nil
}

func (m *MemoryTokenStore) Save(_ context.Context, server string, c Credential) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creds[server] = c
	return nil
}

func (m *MemoryTokenStore) Delete(_ context.Context, server string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.creds, server)
	return nil
}
