package mcpbridge

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

func notification(method string, fields map[string]any) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: method, Params: mcp.NotificationParams{AdditionalFields: fields},
	}}
}

// TestResourceUpdatedOnlyWhenSubscribed: a server cannot make the editor re-read (and show) a
// resource nobody opened: notifications/resources/updated passes only for subscribed URIs; list
// changes drop the cached lists.
func TestResourceUpdatedOnlyWhenSubscribed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []ResourceEvent
		fire := func(ev ResourceEvent) {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		}
		c := &conn{cfg: config.ServerConfig{Name: "s"}}
		c.lists.subscribed = map[string]bool{"x://open": true}
		c.lists.resources, c.lists.templates, c.lists.prompts = []Resource{{URI: "x://old"}}, []ResourceTemplate{}, []Prompt{{Name: "p"}}
		c.onResourceNotification(notification(string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": "x://never-opened"}), fire)
		c.onResourceNotification(notification(string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": "x://open"}), fire)
		c.onResourceNotification(notification(string(mcp.MethodNotificationResourcesListChanged), nil), fire)
		synctest.Wait()
		want := map[ResourceEvent]bool{
			{Server: "s", Kind: EventResourceUpdated, URI: "x://open"}: true,
			{Server: "s", Kind: EventResourcesChanged}:                 true,
		}
		if len(got) != 2 || !want[got[0]] || !want[got[1]] {
			t.Errorf("events = %+v", got)
		}
		if c.lists.resources != nil || c.lists.templates != nil || c.lists.prompts == nil {
			t.Errorf("after resources/list_changed: resources %v templates %v prompts %v", c.lists.resources, c.lists.templates, c.lists.prompts)
		}
		c.onResourceNotification(notification(string(mcp.MethodNotificationPromptsListChanged), nil), fire)
		synctest.Wait()
		if c.lists.prompts != nil || len(got) != 3 || got[2].Kind != EventPromptsChanged {
			t.Errorf("after prompts/list_changed: prompts %v, events %+v", c.lists.prompts, got)
		}
	})
}

func readRaw(t *testing.T, contents ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"contents": contents})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadResultCaps: each text and all texts together are capped at MaxResultText with the
// marker, as tool results are; binary content past MaxResultTotal is refused.
func TestReadResultCaps(t *testing.T) {
	big := strings.Repeat("a", MaxResultText-100)
	res, err := parseReadResult(readRaw(t,
		map[string]any{"uri": "x://1", "text": big},
		map[string]any{"uri": "x://2", "text": strings.Repeat("b", 1000)},
		map[string]any{"uri": "x://3", "blob": "AAAA", "mimeType": "image/png"},
	), &stdio.Frame{})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents[0]; c.Truncated || c.Text != big || c.Bytes != len(big) {
		t.Errorf("first text: truncated %v, %d bytes", c.Truncated, len(c.Text))
	}
	c := res.Contents[1]
	if !c.Truncated || c.Bytes != 1000 || !strings.HasPrefix(c.Text, strings.Repeat("b", 100)+"\n\n[mcp output truncated: 1000 bytes total, 100 kept]") {
		t.Errorf("second text over the joint cap: truncated %v, %q", c.Truncated, c.Text)
	}
	if c := res.Contents[2]; c.Blob != "AAAA" || c.Bytes != 4 || c.MIMEType != "image/png" {
		t.Errorf("blob = %+v", c)
	}
	if _, err := parseReadResult(readRaw(t, map[string]any{"uri": "x://b", "blob": strings.Repeat("A", MaxResultTotal+4)}), &stdio.Frame{}); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a blob over the limit: %v", err)
	}
	if _, err := parseReadResult([]byte(`{"contents":"nope"}`), &stdio.Frame{}); err == nil {
		t.Errorf("malformed result accepted")
	}
}

// TestPromptResultCaps: prompt messages share the text cap; other blocks are kept, described.
func TestPromptResultCaps(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"description": "d", "messages": []any{
		map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": strings.Repeat("x", MaxResultText+10)}},
		map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "more"}},
		map[string]any{"role": "user", "content": map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}},
	}})
	res, err := parsePromptResult(raw, &stdio.Frame{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Messages) != 3 || !strings.HasSuffix(res.Messages[0].Text, "[mcp output truncated: 1048586 bytes total, 1048576 kept]") {
		t.Fatalf("prompt = truncated %v, %d messages", res.Truncated, len(res.Messages))
	}
	if m := res.Messages[1]; m.Role != "assistant" || m.Text != "\n\n[mcp output truncated: 4 bytes total, 0 kept]" {
		t.Errorf("second message past the cap = %+v", m)
	}
	if m := res.Messages[2]; m.Text != "[image content, 53 bytes]" || !strings.Contains(string(m.Content), `"data":"AAAA"`) {
		t.Errorf("image message = %+v", m)
	}
}
