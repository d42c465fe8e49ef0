package mcpbridge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

func ptr[T any](v T) *T { return &v }

func TestParseElicitSchema(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{
		"zeta":{"type":"string","title":"Z","minLength":2,"maxLength":5,"format":"email"},
		"alpha":{"type":"integer","minimum":1,"maximum":10,"default":3},
		"pick":{"type":"string","oneOf":[{"const":"a","title":"Ay"},{"const":"b"}]},
		"legacy":{"type":"string","enum":["x","y"],"enumNames":["Ex","Why"]},
		"many":{"type":"array","items":{"type":"string","enum":["p","q"]},"maxItems":2},
		"ok":{"type":"boolean","default":"not a bool"}},
		"required":["zeta","ok"]}`)
	got, err := ParseElicitSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []ElicitField{
		{Name: "zeta", Title: "Z", Type: "string", Required: true, Format: "email", MinLength: ptr(2), MaxLength: ptr(5)},
		{Name: "alpha", Type: "integer", Minimum: ptr(1.0), Maximum: ptr(10.0), Default: 3.0},
		{Name: "pick", Type: "string", Enum: []string{"a", "b"}, EnumTitles: []string{"Ay", "b"}},
		{Name: "legacy", Type: "string", Enum: []string{"x", "y"}, EnumTitles: []string{"Ex", "Why"}},
		{Name: "many", Type: "array", Enum: []string{"p", "q"}, EnumTitles: []string{"p", "q"}, MaxItems: ptr(2)},
		{Name: "ok", Type: "boolean", Required: true}, // a default of the wrong type is dropped
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields, in document order (-want +got):\n%s", diff)
	}

	for _, bad := range []struct{ schema, want string }{
		{``, "missing"},
		{`[]`, "not a JSON object schema"},
		{`{"type":"array"}`, `type must be "object"`},
		{`{"type":"object","properties":{"o":{"type":"object"}}}`, `property "o": type "object" is not allowed`},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`, `property "l": an array needs items with an enum`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, `required names "b"`},
		{`{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"string"}}}`, `property "a" twice`},
	} {
		if _, err := ParseElicitSchema(json.RawMessage(bad.schema)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseElicitSchema(%s) = %v, want an error with %q", bad.schema, err, bad.want)
		}
	}
}

func TestValidateElicitation(t *testing.T) {
	fields, err := ParseElicitSchema(json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","minLength":1,"maxLength":3},
		"mail":{"type":"string","format":"email"},
		"day":{"type":"string","format":"date"},
		"n":{"type":"integer","minimum":1,"maximum":10},
		"color":{"type":"string","enum":["red","blue"]},
		"tags":{"type":"array","items":{"enum":["a","b"]},"minItems":1},
		"yes":{"type":"boolean"}},"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		content string
		want    string // "" = valid
	}{
		{`{"name":"bob"}`, ""},
		{`{"name":"bob","mail":"b@x.org","day":"2026-11-30","n":10,"color":"red","tags":["a","b"],"yes":false}`, ""},
		{`{}`, `"name" is required`},
		{`{"name":null}`, `"name" is required`},
		{`{"name":"bobby"}`, `"name": must be at most 3 characters`},
		{`{"name":""}`, `"name": must be at least 1 characters`},
		{`{"name":7}`, `"name": must be a string`},
		{`{"name":"b","mail":"nope"}`, `"mail": must be an email address`},
		{`{"name":"b","day":"30/11/2026"}`, `"day": must be a date (YYYY-MM-DD)`},
		{`{"name":"b","n":2.5}`, `"n": must be a whole number`},
		{`{"name":"b","n":11}`, `"n": must be at most 10`},
		{`{"name":"b","n":"3"}`, `"n": must be a number`},
		{`{"name":"b","color":"green"}`, `"color": must be one of red, blue`},
		{`{"name":"b","tags":[]}`, `"tags": needs at least 1 choices`},
		{`{"name":"b","tags":["c"]}`, `"tags": each choice must be one of a, b`},
		{`{"name":"b","yes":"true"}`, `"yes": must be true or false`},
		{`{"name":"b","extra":1}`, `"extra" is not a field of this form`},
	} {
		var content map[string]any
		if err := json.Unmarshal([]byte(tc.content), &content); err != nil {
			t.Fatal(err)
		}
		err := ValidateElicitation(fields, content)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("ValidateElicitation(%s) = %v, want %q", tc.content, err, tc.want)
		}
	}
}

// TestElicitation: a server's elicitation/create reaches Options.Elicit with the server's name and
// the form flattened, and the answer goes back to the server; over stdio and HTTP, form and url.
func TestElicitation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) config.ServerConfig
	}{
		{"stdio", func(t *testing.T) config.ServerConfig { return stdioCfg("e", "--elicit") }},
		{"streamable-http", func(t *testing.T) config.ServerConfig {
			return config.ServerConfig{Name: "e", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: startMCPTestHTTP(t, "--http", "--elicit"),
				StartupTimeout: 20 * time.Second, CallTimeout: 20 * time.Second}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []Elicitation
			r := newTestRegistry(t, Options{Elicit: func(ctx context.Context, e Elicitation) ElicitResult {
				mu.Lock()
				seen = append(seen, e)
				mu.Unlock()
				if e.Mode == "url" {
					return ElicitResult{Action: ElicitDecline}
				}
				return ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "Ada", "agree": true, "count": 4.0}}
			}})
			if st := applyAndWait(t, r, tc.cfg(t)); st["e"].State != StateReady {
				t.Fatalf("status = %+v", st["e"])
			}
			res, err := r.Call(context.Background(), "mcp__e__ask", json.RawMessage(`{"message":"Who are you?"}`))
			if err != nil || res.IsError {
				t.Fatalf("ask = %+v, %v", res, err)
			}
			if want := `{"action":"accept","content":{"agree":true,"count":4,"name":"Ada"}}`; res.Text != want {
				t.Errorf("the server got %s, want %s", res.Text, want)
			}
			res, err = r.Call(context.Background(), "mcp__e__open_url", json.RawMessage(`{"url":"https://example.com/login"}`))
			if err != nil || res.IsError || !strings.Contains(res.Text, `"action":"decline"`) {
				t.Errorf("open_url = %+v, %v", res, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 2 {
				t.Fatalf("Elicit called %d times, want 2", len(seen))
			}
			form, url := seen[0], seen[1]
			if form.Server != "e" || form.Mode != "form" || form.Message != "Who are you?" || !json.Valid(form.Schema) {
				t.Errorf("form elicitation = %+v", form)
			}
			var names []string
			for _, f := range form.Fields {
				names = append(names, f.Name)
			}
			want := []string{"name", "count", "color", "agree"} // the server's order
			if tc.name != "stdio" {
				want = []string{"agree", "color", "count", "name"} // mcp-go's HTTP client decodes the schema into a map
			}
			if !slices.Equal(names, want) {
				t.Errorf("fields %v, want %v", names, want)
			}
			if url.Server != "e" || url.Mode != "url" || url.URL != "https://example.com/login" || url.ID != "e-1" || url.Message != "Sign in to continue." {
				t.Errorf("url elicitation = %+v", url)
			}
		})
	}
	t.Run("no capability", func(t *testing.T) {
		r := newTestRegistry(t, Options{})
		applyAndWait(t, r, stdioCfg("e", "--elicit"))
		if res, _ := r.Call(context.Background(), "mcp__e__ask", nil); !res.IsError {
			t.Errorf("ask without the elicitation capability = %+v, want an error", res)
		}
	})
}
