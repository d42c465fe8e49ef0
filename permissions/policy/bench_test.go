package policy

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkTool is the policy's cost on a call's path: nothing, a typical policy, and 200 rules.
func BenchmarkTool(b *testing.B) {
	var many strings.Builder
	for i := range 200 {
		fmt.Fprintf(&many, `"mcp__server%d__tool%d",`, i%20, i)
	}
	for _, bc := range []struct{ name, src string }{
		{"none", `{}`},
		{"typical", `{"permissions": {"deny": ["mcp__github__delete_repository", "mcp__shell"], "ask": ["mcp__github__create_*"], "allow": ["mcp__github__get_issue"]}}`},
		{"200rules", `{"permissions": {"deny": [` + strings.TrimSuffix(many.String(), ",") + `]}}`},
	} {
		p := FromSources(noLookPath, MemSource{Path: "/p.json", Data: []byte(bc.src)})
		if p.Broken() != nil {
			b.Fatal(p.Broken())
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Tool("mcp__github__list_issues", "github")
			}
		})
	}
}
