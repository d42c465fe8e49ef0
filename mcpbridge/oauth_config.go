package mcpbridge

import (
	"encoding/json"
	"sort"
)

// parseOAuth reads an entry's "oauth" object: {clientId, clientSecret?, scopes?, callbackPort?}.
func parseOAuth(raw json.RawMessage, bad func(key, format string, args ...any)) *OAuthSettings {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		bad("oauth", "must be an object: {\"clientId\": ..., \"clientSecret\": ..., \"scopes\": [...], \"callbackPort\": ...}")
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
