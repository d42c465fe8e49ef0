package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
)

type nopUI struct{}

func (nopUI) Ask(*Question)                                           {}
func (nopUI) Resolved(*Question)                                      {}
func (nopUI) Notify(Level, string)                                    {}
func (nopUI) ServersChanged([]mcpbridge.ServerStatus)                 {}
func (nopUI) ServersStarting()                                        {}
func (nopUI) ToolProgress() ToolProgress                              { return nil }
func (nopUI) Buffer(string) (string, bool)                            { return "", false }
func (nopUI) ApplyEdit(context.Context, string, string) (bool, error) { return false, nil }
func (nopUI) ChatEvent(ChatEvent)                                     {}

// BenchmarkPinVerdict is what pinning adds to every call: the gate's pin check once the tool list
// was compared (a pointer compare and one map lookup; the comparison itself runs on tool-list
// changes only).
func BenchmarkPinVerdict(b *testing.B) {
	dir := b.TempDir()
	a, err := New(Options{AllowlistPath: filepath.Join(dir, "allow_tool"), TrustPath: filepath.Join(dir, "trust.json"),
		PinsPath: filepath.Join(dir, "pins.json"), NoAudit: true, UserConfigFile: filepath.Join(dir, "mcp.json"),
		ProviderConfigFile: filepath.Join(dir, "config.json")}, nopUI{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	req := permissions.Request{Tool: "mcp__t__echo", Server: "t"}
	a.pinVerdict(req) // the first comparison
	b.ReportAllocs()
	for b.Loop() {
		if v := a.pinVerdict(req); v.Hold {
			b.Fatal("held")
		}
	}
}
