package broker

import (
	"strings"
	"testing"
)

// TestParseMsg: what a hostile server or window could write to make the daemon route by one id
// while a reader in the window sees another is refused.
func TestParseMsg(t *testing.T) {
	for _, tc := range []struct {
		in                 string
		ok                 bool
		req, notif, result bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true, false, false, true},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`, true, true, false, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, true, false, true, false},
		{`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`, false, false, false, false},       // which id?
		{`{"jsonrpc":"2.0","id":1,"ID":2,"result":{}}`, false, false, false, false},       // encoding/json takes "ID" too
		{`{"jsonrpc":"2.0","Method":"x","id":1}`, false, false, false, false},             // case variant
		{`{"jsonrpc":"2.0","id":{"x":1},"result":{}}`, false, false, false, false},        // not a routable id
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, false, false, false, false},            // parse errors are not routed
		{`{"jsonrpc":"2.0","method":"a","method":"b"}`, false, false, false, false},       // two methods
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false, false, false, false},        // batches are not MCP
		{`{"jsonrpc":"2.0","id":1,"method":"tools\u002fcall"}`, true, true, false, false}, // escaped: decoded
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, false, false, false, false}, // a request, or an answer to a reader that goes by the result
		{`{"jsonrpc":"2.0","method":"x","error":{}}`, true, false, true, false},           // no id: no reader takes it for an answer
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", true, false, false, true},
		{`not json`, false, false, false, false},
	} {
		m, ok := parseMsg([]byte(tc.in))
		if ok != tc.ok || ok && (m.isRequest() != tc.req || m.isNotification() != tc.notif || m.isResponse() != tc.result) {
			t.Errorf("parseMsg(%s) = ok %v req %v notif %v resp %v; want %v %v %v %v", tc.in, ok,
				m.isRequest(), m.isNotification(), m.isResponse(), tc.ok, tc.req, tc.notif, tc.result)
		}
	}
}

// TestRewriteInPlace: the id and the progress token are replaced where they sit; the rest of
// the frame (a large result, say) is copied byte for byte.
func TestRewriteInPlace(t *testing.T) {
	in := `{"jsonrpc":"2.0", "id" : "w-1","method":"tools/call","params":{"name":"x","arguments":{"id":"w-1","_meta":{"progressToken":"no"}},"_meta":{"progressToken":"w-1"}}}` + "\n"
	m, ok := parseMsg([]byte(in))
	if !ok {
		t.Fatal("not parsed")
	}
	tok, ok := progressToken(m.params)
	if !ok || string(tok) != `"w-1"` {
		t.Fatalf("progressToken = %s", tok)
	}
	out := splice(m.data, edit{at: off(m.data, m.id), n: len(m.id), with: "17"},
		edit{at: off(m.data, tok), n: len(tok), with: `"sb-17"`})
	want := strings.Replace(strings.Replace(in, `"id" : "w-1"`, `"id" : 17`, 1), `"progressToken":"w-1"`, `"progressToken":"sb-17"`, 1)
	if string(out) != want {
		t.Fatalf("rewritten:\n%s\nwant\n%s", out, want)
	}
}
