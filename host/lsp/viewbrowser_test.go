package lsp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// The MCP Apps example servers from npm (ext-apps 2.0.x), run as users run them.
var npmApps = map[string]struct{ pkg, tool, kind string }{
	"basic":  {"@modelcontextprotocol/server-basic-vanillajs@2.0.3", "mcp__basic__get-time", "basic"},
	"budget": {"@modelcontextprotocol/server-budget-allocator@2.0.3", "mcp__budget__get-budget-data", "budget"},
	"cohort": {"@modelcontextprotocol/server-cohort-heatmap@2.0.3", "mcp__cohort__get-cohort-data", "cohort"},
}

// playwright installs testdata/viewbrowser's lockfile (playwright-core) once into the user's
// cache and returns the directory holding run.mjs beside its node_modules.
func playwright(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile("testdata/viewbrowser/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no cache directory for playwright-core")
	}
	dir := filepath.Join(cache, "switchboard-tests", "viewbrowser-"+hex.EncodeToString(sum[:6]))
	for _, f := range []string{"package.json", "package-lock.json", "run.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata/viewbrowser", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci (playwright-core): %v\n%s", err, out)
		}
	}
	return dir
}

// npmStartup is how long an example server from npm is given to start (and the test waits for it).
const npmStartup = 4 * time.Minute

// TestViewBrowserChromium is the browser path as a Neovim user meets it, in headless Chromium:
// the views of cmd/mcptest --apps and of three example servers from npm render in the host page;
// their buttons call tools through the gate (the person is asked, "The view of ... asks"); a
// denied call shows as denied in the view; what a hostile view tries (another origin, the
// parent's document, storage, cookies, the VS Code API) fails; the page's address works once.
func TestViewBrowserChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium and downloads the example servers")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("Chromium is not installed (apt-get install chromium, or set CHROMIUM)")
	}
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	pw := playwright(t)

	var mu sync.Mutex
	var prompts []string
	tickAsked := 0
	responder := func(_ context.Context, p hosttest.ShowMessageRequestParams) string {
		mu.Lock()
		defer mu.Unlock()
		prompts = append(prompts, p.Message)
		switch {
		case strings.HasPrefix(p.Message, "The view of mcp__apps__clock asks: Allow mcp__apps__tick?"):
			tickAsked++
			if tickAsked == 1 {
				return wire.TitleDeny
			}
			return wire.TitleAllowOnce
		case strings.Contains(p.Message, "asks you to open"):
			return wire.TitleOpen
		case strings.Contains(p.Message, "Allow "):
			return wire.TitleAllowOnce
		}
		return ""
	}
	servers := map[string]any{"apps": server("--apps")}
	home, _ := os.UserHomeDir()
	npmCache := filepath.Join(home, ".npm") // the user's npm cache: the test's HOME is a fresh one
	if c := os.Getenv("npm_config_cache"); c != "" {
		npmCache = c
	}
	for name, a := range npmApps {
		servers[name] = map[string]any{"command": "npx", "args": []string{"-y", "--silent", a.pkg, "--stdio"},
			"env": map[string]string{"npm_config_cache": npmCache}, "startupTimeoutSeconds": npmStartup.Seconds()}
	}
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(servers), Responder: responder})
	type step struct {
		Kind string `json:"kind"`
		URL  string `json:"url"`
	}
	var plan []step
	open := func(kind, name string, args any) {
		var res wire.ToolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": name, "arguments": args}, &res)
		if res.IsError || res.View == nil || res.View.Error != "" {
			t.Fatalf("%s: %+v (view %+v)", name, res, res.View)
		}
		var ob wire.ViewOpenInBrowserResult
		env.MustCommand(wire.CmdViewOpenInBrowser, map[string]any{"id": res.View.ID}, &ob)
		plan = append(plan, step{kind, ob.URL})
	}
	env.AwaitServer("apps", "ready")
	open("clock", "mcp__apps__clock", map[string]any{"label": "kitchen"})
	for name, a := range npmApps {
		// As long as the entry gives the server to start: on a fresh machine npx downloads it
		// first, beside the other packages' tests (30 s was not always enough).
		if st := env.AwaitServerWithin(npmStartup, name, "ready"); st.State != "ready" {
			t.Fatalf("%s: %+v", name, st)
		}
		open(a.kind, a.tool, map[string]any{})
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	b, _ := json.Marshal(plan)
	if err := os.WriteFile(planFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(pw, "run.mjs"), planFile)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run.mjs: %v\n%s", err, out)
	}
	var got []map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("run.mjs output: %v\n%s", err, out)
	}
	byKind := map[string]map[string]any{}
	for _, r := range got {
		byKind[r["kind"].(string)] = r
		if r["error"] != nil {
			t.Errorf("%s: %v (console %v)", r["kind"], r["error"], r["console"])
		}
	}
	str := func(kind, key string) string { s, _ := byKind[kind][key].(string); return s }
	clock := byKind["clock"]
	t.Logf("clock: %v", clock)
	for key, want := range map[string]string{
		"input": `{"label":"kitchen"}`, "result": "clock kitchen: tick 0", "tick2": "ok: tick 1",
		"escapes": "fetch:blocked parent:blocked storage:blocked cookie:blocked vscode:blocked", "link": "opened",
		"frameHeight": "260px",
	} {
		if str("clock", key) != want {
			t.Errorf("clock %s = %q, want %q", key, str("clock", key), want)
		}
	}
	if s := str("clock", "status"); !strings.HasPrefix(s, "initialized theme=") || !strings.HasSuffix(s, "mode=inline") {
		t.Errorf("clock status %q", s)
	}
	if s := str("clock", "tick1"); !strings.HasPrefix(s, "denied or failed:") || !strings.Contains(s, "denied") {
		t.Errorf("the denied call shows in the view as %q", s)
	}
	if n, _ := clock["cspViolations"].(float64); n < 1 {
		t.Errorf("the blocked fetch left no CSP report in the console")
	}
	if !strings.Contains(str("clock", "reload"), "already used") {
		t.Errorf("page address reused: %q", str("clock", "reload"))
	}
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT`)
	if t1, t2 := str("basic", "time1"), str("basic", "time2"); !iso.MatchString(t1) || !iso.MatchString(t2) || t1 == t2 {
		t.Errorf("basic: time %q then %q", t1, t2)
	}
	if s := str("budget", "status"); s == "" || strings.Contains(s, "$0 / $0") {
		t.Errorf("budget status %q", s)
	}
	if n, _ := byKind["budget"]["sliders"].(float64); n < 1 {
		t.Errorf("budget: no sliders")
	}
	if str("cohort", "text") == "" {
		t.Errorf("cohort: nothing rendered")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"The view of mcp__apps__clock asks: Allow mcp__apps__tick?", "The view of mcp__basic__get-time asks: Allow mcp__basic__get-time?"}
	for _, w := range want {
		found := false
		for _, p := range prompts {
			found = found || strings.HasPrefix(p, w)
		}
		if !found {
			t.Errorf("no question %q among %q", w, prompts)
		}
	}
	if docs := env.State().RequestParams("window/showDocument"); len(docs) != len(plan)+1 { // each view, and the link
		t.Errorf("%d documents shown, want %d", len(docs), len(plan)+1)
	}
}
