package lsp_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// A provider that cannot list its models is not a bad request: the editor gets RequestFailed
// (-32803) with one plain sentence, not InvalidParams.
func TestModelsScriptProviderCannotList(t *testing.T) {
	env := scriptSession(t, "")
	var res wire.ModelsResult
	err := env.Command(wire.CmdModels, nil, &res)
	if err == nil {
		t.Fatalf("switchboard.models with the script provider = %+v, want an error", res)
	}
	if code := hosttest.ErrorCode(err); code != -32803 {
		t.Errorf("error code = %d, want -32803 (RequestFailed)", code)
	}
	if !strings.Contains(err.Error(), host.MsgNoModelList) {
		t.Errorf("error = %q, want %q", err, host.MsgNoModelList)
	}
}

// The models come from the provider's /models; a model id a terminal would have to escape is left
// out (no setting could name it honestly) and display names are escaped.
func TestModelsListsProviderModels(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"local-7b","created":1700000000},` +
			`{"id":"evil\u001b[31m"},{"id":"qwen"}]}`))
	}))
	t.Cleanup(api.Close)
	opts := initOpts(map[string]any{"t": server()}, "provider", map[string]any{
		"type": "openai-compatible", "baseURL": api.URL + "/v1", "model": "qwen"})
	env := runWith(t, hosttest.Config{InitOptions: opts})
	var res wire.ModelsResult
	env.MustCommand(wire.CmdModels, nil, &res)
	if res.Current != "qwen" {
		t.Errorf("current = %q, want qwen", res.Current)
	}
	var ids []string
	for _, m := range res.Models {
		ids = append(ids, m.ID)
	}
	if got := strings.Join(ids, " "); got != "local-7b qwen" {
		t.Errorf("models = %q, want %q", got, "local-7b qwen")
	}
	if len(res.Models) > 0 && res.Models[0].Created != 1700000000 {
		t.Errorf("created = %d", res.Models[0].Created)
	}
}

// The done event carries the turn's and the conversation's usage, cached tokens and the cost
// from provider.prices.
func TestChatDoneCarriesUsageAndCost(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "llm.script")
	writeFile(t, path, "reply text \"one\"\nreply usage in=1000 out=100 cached=800\n\nreply text \"two\"\nreply usage in=2000 out=10 cached=1500 write=100\n")
	opts := initOpts(map[string]any{"t": server()}, "provider", map[string]any{"type": "script", "script": path, "model": "m1",
		"prices": map[string]any{"m1": map[string]any{"input": 3, "cachedInput": 0.3, "cacheWrite": 3.75, "output": 15}}})
	env := runWith(t, hosttest.Config{InitOptions: opts})

	done := func(conv, prompt string) (wire.Event, string) {
		t.Helper()
		var res chatResult
		env.MustCommand(wire.CmdChat, map[string]any{"conversation": conv, "prompt": prompt}, &res)
		evs := awaitDone(env, res.Turn)
		var ev wire.Event
		if err := json.Unmarshal(evs[len(evs)-1].Raw, &ev); err != nil {
			t.Fatal(err)
		}
		return ev, res.Conversation
	}
	first, conv := done("", "hi")
	u, cu := first.Usage, first.ConversationUsage
	if u == nil || cu == nil {
		t.Fatalf("done event without usage: %+v", first)
	}
	if u.InputTokens != 1000 || u.CachedInputTokens != 800 || u.OutputTokens != 100 || u.CacheWriteTokens != 0 {
		t.Errorf("turn usage = %+v", *u)
	}
	// 200 uncached * 3 + 800 cached * 0.3 + 100 out * 15, per million tokens.
	if want := (200*3 + 800*0.3 + 100*15) / 1e6; math.Abs(u.Cost-want) > 1e-12 {
		t.Errorf("turn cost = %v, want %v", u.Cost, want)
	}
	if *cu != *u {
		t.Errorf("first turn: conversation usage %+v, want the turn's %+v", *cu, *u)
	}

	second, _ := done(conv, "again")
	if u := second.Usage; u == nil || u.CacheWriteTokens != 100 || u.CachedInputTokens != 1500 {
		t.Errorf("second turn usage = %+v", second.Usage)
	}
	if cu := second.ConversationUsage; cu == nil || cu.InputTokens != 3000 || cu.CachedInputTokens != 2300 ||
		cu.OutputTokens != 110 || cu.CacheWriteTokens != 100 || cu.Cost <= second.Usage.Cost {
		t.Errorf("conversation usage = %+v", second.ConversationUsage)
	}
}

// toolSearchThreshold and alwaysLoadedTools reach the model's tool list, from initializationOptions
// and again from didChangeConfiguration.
func TestToolSearchSettingsReachTheModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.script")
	writeFile(t, path, "expect tools ~ \" search_tools mcp__t__echo$\"\nreply text \"searching\"\n\n"+
		"expect tools ~ \"^read_file list_files search_files edit_file read_tool_result read_resource mcp__t__\"\nreply text \"all\"\n")
	provider := map[string]any{"type": "script", "script": path}
	opts := initOpts(map[string]any{"t": server()}, "provider", provider, "toolSearchThreshold", 0, "alwaysLoadedTools", []string{"mcp__t__echo"})
	env := runWith(t, hosttest.Config{InitOptions: opts})

	turn := func() {
		t.Helper()
		var res chatResult
		env.MustCommand(wire.CmdChat, map[string]any{"prompt": "go"}, &res)
		for _, e := range awaitDone(env, res.Turn) {
			if e.Kind == "error" {
				t.Errorf("turn failed: %s", e.Error)
			}
		}
	}
	turn()
	opts = initOpts(map[string]any{"t": server()}, "provider", provider, "toolSearchThreshold", -1)
	env.Notify(wire.MethodDidChangeConfiguration, map[string]any{"settings": map[string]any{"switchboard": opts}})
	turn()
}
