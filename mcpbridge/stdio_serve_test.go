package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// TestServerCancelsItsRequest: a server request we are answering (say, an elicitation) that the
// server cancels with notifications/cancelled ends its handler's ctx, and gets no answer; the
// handler sees the params as sent.
func TestServerCancelsItsRequest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin")
	req := `{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}}}`
	script := `printf '%s\n' "$REQ"; read -r go; printf '%s\n' "$CANCEL"; cat > "$OUT"`
	env := append(os.Environ(), "REQ="+req, "OUT="+out,
		`CANCEL={"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"user gave up"}}`)
	tr := stdio.NewTransport("sh", []string{"-c", script}, env, "", stdio.DefaultMaxFrame, slog.New(slog.DiscardHandler))
	started := make(chan json.RawMessage, 1)
	ended := make(chan error, 1)
	tr.SetRequestHandler(func(ctx context.Context, r transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		started <- stdio.RawParams(ctx)
		<-ctx.Done()
		ended <- ctx.Err()
		return transport.NewJSONRPCResultResponse(r.ID, json.RawMessage(`{"action":"cancel"}`)), nil
	})
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := <-started
	var p struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if fields, err := ParseElicitSchema(p.RequestedSchema); err != nil || fields[0].Name != "b" || fields[1].Name != "a" {
		t.Errorf("fields from the raw params = %+v, %v; want b then a, as sent", fields, err)
	}
	// Let the child send the cancellation.
	if err := tr.SendNotification(context.Background(), mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "go"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != context.Canceled {
		t.Errorf("handler ctx ended with %v, want context.Canceled", err)
	}
	tr.Close()
	b, err := os.ReadFile(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(b) != 0 {
		t.Errorf("the server got %q after cancelling its request; want nothing", b)
	}
}

// TestStalledServerDoesNotHoldWrites: a server that stops reading its stdin cannot hang the
// writes that have no deadline of their own (a notification, an answer to its request) and,
// through the write lock, every later call: past the stall bound it is stopped, and later writes
// fail at once. Without the bound the first write never returns.
func TestStalledServerDoesNotHoldWrites(t *testing.T) {
	tr := stdio.NewTransport("sh", []string{"-c", "exec sleep 3600"}, os.Environ(), "", stdio.DefaultMaxFrame, slog.New(slog.DiscardHandler))
	tr.Stall = 200 * time.Millisecond
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	big := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "x",
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"pad": strings.Repeat("p", 256<<10)}}}} // past a pipe's buffer
	for i := range 2 {
		done := make(chan error, 1)
		go func() { done <- tr.SendNotification(context.Background(), big) }()
		select {
		case err := <-done:
			if !errors.Is(err, transport.ErrTransportClosed) || !strings.Contains(err.Error(), "stopped reading its stdin") {
				t.Errorf("write %d to a stalled server: %v; want the transport closed, saying why", i, err)
			}
		case <-time.After(30 * time.Second): // a failsafe, not a timing assertion: the write hangs
			t.Fatalf("write %d to a stalled server still blocked", i)
		}
	}
}
