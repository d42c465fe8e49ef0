package config

import (
	"encoding/json"
	"net/url"
	"sort"
)

// parseOAuth reads an entry's "oauth" object: {clientId?, clientSecret?, clientMetadataUrl?,
// issuer?, scopes?, callbackPort?}.
func parseOAuth(raw json.RawMessage, bad func(key, format string, args ...any)) *OAuthSettings {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		bad("oauth", "must be an object: {\"clientId\": ..., \"clientSecret\": ..., \"clientMetadataUrl\": ..., \"issuer\": ..., \"scopes\": [...], \"callbackPort\": ...}")
		return nil
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var o OAuthSettings
	for _, k := range keys {
		v := fields[k]
		var err error
		switch k {
		case "clientId":
			err = json.Unmarshal(v, &o.ClientID)
		case "clientSecret":
			err = json.Unmarshal(v, &o.ClientSecret)
		case "clientMetadataUrl":
			err = json.Unmarshal(v, &o.ClientMetadataURL)
			if err == nil && !ValidClientMetadataURL(o.ClientMetadataURL) {
				bad("oauth.clientMetadataUrl", "must be an https URL with a path (where the client metadata document is hosted), got %q", o.ClientMetadataURL)
			}
		case "issuer":
			err = json.Unmarshal(v, &o.Issuer)
			if err == nil && !validURL(o.Issuer) {
				bad("oauth.issuer", "must be the authorization server's issuer URL, got %q", o.Issuer)
			}
		case "scopes":
			err = json.Unmarshal(v, &o.Scopes)
		case "callbackPort":
			err = json.Unmarshal(v, &o.CallbackPort)
			if err == nil && (o.CallbackPort < 1 || o.CallbackPort > 65535) {
				bad("oauth.callbackPort", "must be a port number from 1 to 65535")
			}
		default:
			bad("oauth."+k, "unknown key")
			continue
		}
		if err != nil {
			bad("oauth."+k, "has the wrong type")
		}
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		bad("oauth.clientSecret", "needs oauth.clientId")
	}
	return &o
}

// ValidClientMetadataURL: s may be a client ID metadata document URL (draft-ietf-oauth-client-id-metadata-document:
// https, with a path component).
func ValidClientMetadataURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.Fragment == "" && u.User == nil
}
