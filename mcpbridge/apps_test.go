package mcpbridge

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAppsViewRead: a tool's _meta.ui names a ui:// resource; the registry reads it over real
// stdio when it lists the tools, keeps the HTML, its checked CSP and permissions, and knows the
// app-only tool.
func TestAppsViewRead(t *testing.T) {
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, stdioCfg("apps", "--apps"))
	if st["apps"].State != StateReady {
		t.Fatalf("state %+v", st["apps"])
	}
	clock, ok := r.Lookup("mcp__apps__clock")
	if !ok || clock.UI == nil || clock.UI.View == nil {
		t.Fatalf("clock has no view: %+v", clock)
	}
	v := clock.UI.View
	if v.Error != "" || !strings.Contains(v.HTML, "mcptest clock 1") || v.MIMEType != AppMIMEType || len(v.SHA256) != 64 {
		t.Fatalf("view %+v", v)
	}
	want := ViewCSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com"}}
	if d := cmp.Diff(want, v.CSP); d != "" {
		t.Errorf("csp (-want +got):\n%s", d)
	}
	if !v.Permissions.ClipboardWrite || v.Permissions.Camera {
		t.Errorf("permissions %+v", v.Permissions)
	}
	if !clock.UI.ModelVisible() || !clock.UI.AppVisible() {
		t.Errorf("clock visibility %v", clock.UI.Visibility)
	}
	tick, ok := r.Lookup("mcp__apps__tick")
	if !ok || tick.UI == nil || tick.UI.ModelVisible() || !tick.UI.AppVisible() {
		t.Fatalf("tick should be app-only: %+v", tick.UI)
	}
	if tick.UI.View != clock.UI.View {
		t.Errorf("one resource is read once and shared")
	}
	var form map[string]json.RawMessage
	if err := json.Unmarshal(clock.Canonical, &form); err != nil || !strings.Contains(string(form["ui"]), v.SHA256) {
		t.Errorf("the pinned form does not cover the view's HTML: %s", clock.Canonical)
	}
}

// TestAppsChangedViewChangesPin: the same tool with other HTML in its view hashes differently (a
// changed view is a changed tool), and the diff names the ui field.
func TestAppsChangedViewChangesPin(t *testing.T) {
	hash := func(version string) (string, json.RawMessage) {
		r := newTestRegistry(t, Options{})
		cfg := stdioCfg("apps", "--apps")
		cfg.Env = map[string]string{"MCPTEST_APPS_VERSION": version} // not in the server's identity: only the view differs
		applyAndWait(t, r, cfg)
		tl, ok := r.Lookup("mcp__apps__clock")
		if !ok {
			t.Fatal("no clock")
		}
		r.Close()
		return tl.Hash, tl.Canonical
	}
	h1, f1 := hash("1")
	h1b, _ := hash("1")
	h2, f2 := hash("2")
	if h1 != h1b {
		t.Fatalf("same view, different hash")
	}
	if h1 == h2 {
		t.Fatalf("a changed view left the tool's hash as it was")
	}
	if d := DiffDefinitions(f1, f2); !strings.HasPrefix(d, "ui:\n") {
		t.Errorf("diff %q", d)
	}
}

// TestAppsCSPInjection: a view that declares entries which would add a directive, a keyword or
// every origin gets none of them; they are listed as dropped (and so are in its pin).
func TestAppsCSPInjection(t *testing.T) {
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, stdioCfg("apps", "--apps", "--apps-csp-inject"))
	tl, _ := r.Lookup("mcp__apps__clock")
	v := tl.UI.View
	if d := cmp.Diff([]string{"https://api.example.com"}, v.CSP.ConnectDomains); d != "" {
		t.Errorf("connect (-want +got):\n%s", d)
	}
	if len(v.Dropped) != 3 {
		t.Errorf("dropped %q", v.Dropped)
	}
}

func TestCSPSource(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.example.com":       "https://api.example.com",
		"HTTPS://API.example.com/":      "https://api.example.com",
		"https://*.example.com":         "https://*.example.com",
		"http://localhost:3000":         "http://localhost:3000",
		"wss://rt.example.com":          "wss://rt.example.com",
		"https://a.com; script-src *":   "",
		"https://a.com 'unsafe-eval'":   "",
		"'self'":                        "",
		"*":                             "",
		"https:":                        "",
		"https://*":                     "",
		"https://*.com":                 "",
		"https://a.com/path":            "",
		"https://a.com:*":               "",
		"https://a.com,https://b.com":   "",
		"javascript://a.com":            "",
		"data://x":                      "",
		"https://a..com":                "",
		"https://user@a.com":            "",
		"https://a.com:99999999":        "",
		"https://exa\u200bmple.com":     "",
		"https://ex\nample.com":         "",
		"https://a.com\"":               "",
		"https://[::1]":                 "",
		"https://a.com:443/../x":        "",
		"https://xn--bcher-kva.example": "https://xn--bcher-kva.example",
	} {
		got, ok := cspSource(in, true)
		if ok != (want != "") || got != want {
			t.Errorf("cspSource(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := cspSource("wss://a.com", false); ok {
		t.Errorf("a socket origin outside connect-src")
	}
}

func TestParseToolUI(t *testing.T) {
	for in, want := range map[string]*ToolUI{
		`{"ui":{"resourceUri":"ui://a/b"}}`:                          {ResourceURI: "ui://a/b"},
		`{"ui/resourceUri":"ui://a/b"}`:                              {ResourceURI: "ui://a/b"},
		`{"ui":{"visibility":["app"]}}`:                              {Visibility: []string{"app"}},
		`{"ui":{"resourceUri":"ui://a","visibility":"model"}}`:       {ResourceURI: "ui://a", Visibility: []string{"app"}},
		`{"ui":{"resourceUri":"ui://a","visibility":["x","model"]}}`: {ResourceURI: "ui://a", Visibility: []string{"model"}},
		`{"other":1}`: nil,
	} {
		got := parseToolUI(json.RawMessage(in))
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	if (&ToolUI{Visibility: []string{}}).ModelVisible() {
		t.Errorf("an empty visibility list offers the tool to nobody")
	}
}

// TestAppsExtensionAdvertised: servers learn that the client shows views (they may offer their
// UI tools only then).
func TestAppsExtensionAdvertised(t *testing.T) {
	rec := t.TempDir() + "/rec"
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, stdioCfg("apps", "--apps", "--record", rec))
	r.Close()
	raw, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	b := string(raw)
	if !strings.Contains(b, `"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}`) {
		t.Errorf("initialize did not advertise the apps extension:\n%.2000s", b)
	}
}

// TestAppsViewsBounded: a server that declares many tools, each with a big view of its own
// (40 views of 1 MiB here; 4,000 would be 4 GB), does not get them all kept: the host reads and
// keeps at most maxServerViewBytes of one server's views, and the views past it say why they
// cannot be shown. Its tools stay usable.
func TestAppsViewsBounded(t *testing.T) {
	r := newTestRegistry(t, Options{})
	cfg := stdioCfg("apps", "--apps", "--apps-many", "40")
	// Its start reads over 32 MiB of views: 6 s under -race on a quiet machine, over the usual
	// 20 s once on CI's two cores beside other packages' tests.
	cfg.StartupTimeout = 3 * time.Minute
	st := applyAndWait(t, r, cfg)
	if st["apps"].State != StateReady {
		t.Fatalf("state %+v", st["apps"])
	}
	kept, refused := 0, 0
	for i := 1; i <= 40; i++ {
		tl, ok := r.Lookup(fmt.Sprintf("mcp__apps__view_%d", i))
		if !ok || tl.UI == nil || tl.UI.View == nil {
			t.Fatalf("view_%d: %+v", i, tl)
		}
		v := tl.UI.View
		kept += len(v.HTML)
		if v.Error != "" {
			refused++
			if v.HTML != "" || !strings.Contains(v.Error, "MiB") {
				t.Errorf("view_%d: error %q with %d bytes kept", i, v.Error, len(v.HTML))
			}
		}
	}
	if kept > maxServerViewBytes {
		t.Errorf("%d MiB of one server's views kept, over the %d MiB bound", kept>>20, maxServerViewBytes>>20)
	}
	if refused == 0 {
		t.Errorf("no view refused")
	}
	if clock, _ := r.Lookup("mcp__apps__clock"); clock.UI == nil || clock.UI.View == nil || clock.UI.View.HTML == "" && clock.UI.View.Error == "" {
		t.Errorf("clock's view: %+v", clock.UI)
	}
}
