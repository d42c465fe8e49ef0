package host

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lineHandler hands on each log record's message.
type lineHandler struct{ lines chan<- string }

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.lines <- r.Message:
	default:
	}
	return nil
}
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lineHandler) WithGroup(string) slog.Handler      { return h }

// startingUI's ServersStarting waits as the LSP front end's does (for the editor's progress, then
// for every server's start, up to its startup timeout).
type startingUI struct {
	nopUI
	release chan struct{}
}

func (u startingUI) ServersStarting() { <-u.release }

// An edit of the allowlist made while the servers start is seen then, not once the slowest of them
// has started or timed out: a revoked grant must not hold for a server's whole startup timeout.
func TestAllowlistWatchedWhileServersStart(t *testing.T) {
	dir := t.TempDir()
	lines := make(chan string, 64)
	ui := startingUI{release: make(chan struct{})}
	defer close(ui.release)
	allow := filepath.Join(dir, "allow_tool")
	a, err := New(Options{AllowlistPath: allow, TrustPath: filepath.Join(dir, "trust.json"),
		PinsPath: filepath.Join(dir, "pins.json"), NoAudit: true, UserConfigFile: filepath.Join(dir, "mcp.json"),
		ProviderConfigFile: filepath.Join(dir, "config.json"), Logger: slog.New(lineHandler{lines})}, ui)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Start(nil, Settings{}, nil)
	if err := os.WriteFile(allow, []byte("not a tool name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, "allowlist") && strings.Contains(l, "grants nothing") {
				return
			}
		case <-deadline:
			t.Fatal("the allowlist's edit was not seen while the servers were starting")
		}
	}
}
