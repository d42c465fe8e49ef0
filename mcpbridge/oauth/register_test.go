package oauth

import (
	"encoding/json"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// The client metadata document shipped for CIMD says what dynamic registration sends.
func TestClientMetadataDocument(t *testing.T) {
	raw, err := os.ReadFile("oauth-client-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClientID     string   `json:"client_id"`
		AppType      string   `json:"application_type"`
		Redirects    []string `json:"redirect_uris"`
		Grants       []string `json:"grant_types"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		ResponseType []string `json:"response_types"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !config.ValidClientMetadataURL(doc.ClientID) {
		t.Errorf("client_id %q is not a URL oauth.clientMetadataUrl accepts", doc.ClientID)
	}
	if doc.AppType != "native" || doc.AuthMethod != "none" || !slices.Equal(doc.Grants, []string{"authorization_code", "refresh_token"}) || !slices.Equal(doc.ResponseType, []string{"code"}) {
		t.Errorf("document %+v differs from what registerClient sends", doc)
	}
	if len(doc.Redirects) != 1 {
		t.Fatalf("redirect_uris = %v, want the loopback callback", doc.Redirects)
	}
	u, err := url.Parse(doc.Redirects[0])
	if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Path != "/callback" {
		t.Errorf("redirect %q is not the sign-in's loopback callback", doc.Redirects[0])
	}
}
