package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// registeredClient is what dynamic client registration (RFC 7591) gave.
type registeredClient struct {
	ID         string `json:"client_id"`
	Secret     string `json:"client_secret,omitempty"`
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
}

// registerClient registers Switchboard with the authorization server at endpoint: a native
// application (SEP-837: it runs on the person's machine and takes the answer on a loopback
// redirect), public (no secret asked for), for the authorization code and refresh token grants.
// The same fields are in mcpbridge/oauth-client-metadata.json, the CIMD document.
func registerClient(ctx context.Context, hc *http.Client, endpoint, redirect string, scopes []string) (registeredClient, error) {
	body := map[string]any{
		"client_name":                "Switchboard",
		"application_type":           "native",
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if len(scopes) > 0 {
		body["scope"] = strings.Join(scopes, " ")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return registeredClient{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return registeredClient{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return registeredClient{}, PlainHTTPError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata))
	if err != nil {
		return registeredClient{}, err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var oe struct {
			Error string `json:"error"`
			Desc  string `json:"error_description"`
		}
		if json.Unmarshal(raw, &oe) == nil && oe.Error != "" {
			return registeredClient{}, &oauthError{oe.Error, oe.Desc}
		}
		return registeredClient{}, fmt.Errorf("the registration endpoint answered %d", resp.StatusCode)
	}
	var c registeredClient
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
		return registeredClient{}, fmt.Errorf("the registration endpoint answered without a client_id")
	}
	return c, nil
}
