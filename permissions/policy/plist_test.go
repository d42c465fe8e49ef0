package policy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestPlistJSON reads binary and XML property lists as plistlib (Python) writes them, as MDM
// puts them in /Library/Managed Preferences.
func TestPlistJSON(t *testing.T) {
	for _, name := range []string{"dev.switchboard.bplist", "dev.switchboard.xml.plist"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		js, err := plistJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := FromSources(noLookPath, MemSource{Path: name, Data: settingsOf(js, KindSettings)})
		if p.Broken() != nil || p.Admit(stdio("shell", "sh", "")).Allowed || p.Contact().Email != "it@example.com" {
			t.Errorf("%s: %s -> broken %v", name, js, p.Broken())
		}
	}
	data, _ := os.ReadFile("testdata/com.microsoft.VSCode.plist")
	js, err := plistJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(js, &m)
	if m["ChatMCP"] != "none" || m["ChatToolsAutoApprove"] != false || m["AdminContactUrl"] != "https://wiki.example.com/été" || m["Count"] != 7.0 {
		t.Errorf("VS Code plist = %s", js)
	}
	// A truncated or garbled list is an error, never a panic.
	for i := 0; i < len(data); i += 3 {
		plistJSON(data[:i])
		bad := []byte(string(data))
		bad[i] ^= 0xff
		plistJSON(bad)
	}
	if _, err := plistJSON([]byte("<plist><array><string>x</string></array></plist>")); err == nil || !strings.Contains(err.Error(), "not a dictionary") {
		t.Errorf("array root: %v", err)
	}
}
