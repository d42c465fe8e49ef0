package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoContextValues: a tool call goes one way down (front end -> App -> session -> permissions
// -> UI) with everything it needs given explicitly (CallRequest.Progress reaches
// session.Manager.CallToolVia; chat events reach UI.ChatEvent); the application hides nothing in a
// ctx for a lower layer to find and climb back up with.
func TestNoContextValues(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"context.WithValue", "ctx.Value("} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s: %s in the application: pass what a call needs explicitly", f, bad)
			}
		}
	}
}
