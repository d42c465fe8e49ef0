package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions/policy"
	"github.com/switchboard-dev/switchboard/session"
)

// readmeBlock is one fenced code block of README.md: its language and text, and the line it
// starts on (for the error).
type readmeBlock struct {
	lang, text string
	line       int
}

func readmeBlocks(t *testing.T) (string, []readmeBlock) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeBlock{lang: strings.TrimPrefix(line, "```"), line: i + 1}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a code block is not closed", cur.line)
	}
	return string(b), blocks
}

// readmeEnv answers every variable an example names (${env:GITHUB_TOKEN}, ...): the examples
// must parse, whatever this machine's environment holds.
func readmeEnv(name string) (string, bool) { return "x", true }

// loadMCPExample loads text as a user mcp.json and fails on any error or on no server.
func loadMCPExample(t *testing.T, where, text string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{UserFile: file, Getenv: readmeEnv})
	if len(errs) > 0 || len(cfgs) == 0 {
		t.Errorf("%s: the example does not load as an mcp.json: %d servers, errors %v\n%s", where, len(cfgs), errs, text)
	}
}

// loadProviderExample loads text as ~/.config/switchboard/config.json.
func loadProviderExample(t *testing.T, where, text string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := session.LoadConfigFile(file); err != nil || c.Type == "" {
		t.Errorf("%s: the example does not load as a config.json: %+v, %v\n%s", where, c, err, text)
	}
}

// loadPolicyExample merges text as a managed-settings.json and fails when the policy is broken
// or warns (an unknown key, say).
func loadPolicyExample(t *testing.T, where, text string) {
	t.Helper()
	lookPath := func(name string) (string, error) { return "/usr/bin/" + filepath.Base(name), nil }
	p := policy.FromSources(lookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(text)})
	if err := p.Broken(); err != nil || len(p.Warnings()) > 0 || p.Empty() {
		t.Errorf("%s: the example is not a clean policy: broken %v, warnings %q\n%s", where, err, p.Warnings(), text)
	}
}

// TestREADMEConfigExamples: every JSON example README.md shows (the mcp.json files, config.json,
// the organisation's policy, the policy as MDM delivers it in a .reg file or a profile) and
// the entries it quotes inline load without an error with the loaders Switchboard uses. A new
// ```json block that fits none of them fails the test until it is given its loader here.
func TestREADMEConfigExamples(t *testing.T) {
	readme, blocks := readmeBlocks(t)
	seen := 0
	for _, b := range blocks {
		where := "README.md:" + strconv.Itoa(b.line)
		switch b.lang {
		case "json", "jsonc":
			seen++
			var top map[string]json.RawMessage
			if b.lang == "json" {
				if err := json.Unmarshal([]byte(b.text), &top); err != nil {
					t.Errorf("%s: not JSON: %v\n%s", where, err, b.text)
					continue
				}
			}
			switch {
			case strings.Contains(b.text, `"mcpServers"`) || top["servers"] != nil:
				loadMCPExample(t, where, b.text)
			case top["provider"] != nil:
				loadProviderExample(t, where, b.text)
			case b.lang == "jsonc" && strings.Contains(b.text, "managed-settings") || strings.Contains(b.text, `"deniedMcpServers"`):
				loadPolicyExample(t, where, b.text)
			default:
				t.Errorf("%s: a %s example this test does not know how to load; add it here\n%s", where, b.lang, b.text)
			}
		case "reg": // "Settings"="<JSON, with \" for each quote>"
			seen++
			m := regexp.MustCompile(`(?m)^"Settings"="(.*)"$`).FindStringSubmatch(b.text)
			if m == nil {
				t.Errorf("%s: no \"Settings\" value\n%s", where, b.text)
				continue
			}
			loadPolicyExample(t, where, strings.ReplaceAll(m[1], `\"`, `"`))
		case "xml": // the profile's Settings string
			seen++
			m := regexp.MustCompile(`<key>Settings</key>\s*<string>(.*)</string>`).FindStringSubmatch(b.text)
			if m == nil {
				t.Errorf("%s: no Settings string\n%s", where, b.text)
				continue
			}
			loadPolicyExample(t, where, m[1])
		}
	}
	if seen < 6 {
		t.Errorf("found %d JSON, .reg and profile examples in README.md; want at least 6 (did the fences change?)", seen)
	}

	// Entries quoted inline, in the server entry or config.json they belong to. (The sandbox's
	// is a syntax summary, "false | true | [...]", not an example.)
	inline := 0
	for _, m := range regexp.MustCompile("`(\"(oauth|prices|provider)\": *\\{[^`]*\\})`").FindAllStringSubmatch(readme, -1) {
		inline++
		snippet := strings.Join(strings.Fields(m[1]), " ")
		switch m[2] {
		case "oauth":
			loadMCPExample(t, "README.md inline "+snippet, `{"mcpServers": {"s": {"type": "http", "url": "https://mcp.example.com/mcp", `+snippet+`}}}`)
		case "prices":
			loadProviderExample(t, "README.md inline "+snippet, `{"provider": {"type": "anthropic", "model": "claude-sonnet-4-5", `+snippet+`}}`)
		case "provider":
			loadProviderExample(t, "README.md inline "+snippet, `{`+snippet+`}`)
		}
	}
	if inline < 4 {
		t.Errorf("found %d inline entries in README.md; want at least 4 (two oauth, prices, the Responses provider)", inline)
	}
}
