package config

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
