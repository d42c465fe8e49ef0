package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const jsoncFile = `// My servers. Keep this comment.
{
    /* block comment before */
    "mcpServers": {
        "a": { "command": "x" }, // a's comment
        "b": {
            "command": "y",
            "args": ["1",],
        }, // b's comment
    },
    "other": 1, // not ours
}
`

func TestAddRemoveRoundTripKeepsBytes(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), jsoncFile)
	if err := AddServer(path, "c", Entry{Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"T": "${env:T}"}}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	want := strings.Replace(jsoncFile, "}, // b's comment\n", "}, // b's comment\n"+
		"        \"c\": {\n"+
		"            \"command\": \"npx\",\n"+
		"            \"args\": [\n"+
		"                \"-y\",\n"+
		"                \"pkg\"\n"+
		"            ],\n"+
		"            \"env\": {\n"+
		"                \"T\": \"${env:T}\"\n"+
		"            }\n"+
		"        },\n", 1)
	if got != want {
		t.Fatalf("after add:\n%s\nwant:\n%s", got, want)
	}
	cfgs, errs := LoadConfig(ConfigSources{UserFile: path, Getenv: env(map[string]string{"T": "v"})})
	if len(errs) != 0 || len(cfgs) != 3 || cfgs[2].Name != "c" || cfgs[2].Args[1] != "pkg" {
		t.Fatalf("load after add: %+v %v", cfgs, errs)
	}
	if err := AddServer(path, "c", Entry{Command: "other"}); !errors.Is(err, ErrServerExists) {
		t.Errorf("second add = %v, want ErrServerExists", err)
	}
	if err := RemoveServer(path, "c"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != jsoncFile {
		t.Fatalf("add then remove changed the file:\n%s", got)
	}
	// Removing a member takes its own comment, and nothing else.
	if err := RemoveServer(path, "a"); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), strings.Replace(jsoncFile, "\n        \"a\": { \"command\": \"x\" }, // a's comment", "", 1); got != want {
		t.Fatalf("remove a:\n%s\nwant:\n%s", got, want)
	}
	if err := RemoveServer(path, "zz"); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("remove of a missing server = %v", err)
	}
}

func TestAddToPlainAndNewFiles(t *testing.T) {
	for _, tc := range []struct{ name, before, after string }{
		{"new file", "", "{\n  \"mcpServers\": {\n    \"s\": {\n      \"url\": \"https://h/mcp\"\n    }\n  }\n}\n"},
		{"no trailing comma", "{\n\t\"servers\": {\n\t\t\"a\": {\"command\": \"x\"}\n\t}\n}\n",
			"{\n\t\"servers\": {\n\t\t\"a\": {\"command\": \"x\"},\n\t\t\"s\": {\n\t\t\t\"url\": \"https://h/mcp\"\n\t\t}\n\t}\n}\n"},
		{"no servers object", "{ \"inputs\": [] }", "{ \"inputs\": [], \"mcpServers\": {\"s\": {\"url\":\"https://h/mcp\"}} }"},
		{"compact", `{"mcpServers":{"a":{"command":"x"}}}`, `{"mcpServers":{"a":{"command":"x"}, "s": {"url":"https://h/mcp"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "mcp.json")
			if tc.before != "" {
				writeFile(t, path, tc.before)
			}
			if err := AddServer(path, "s", Entry{URL: "https://h/mcp"}); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != tc.after {
				t.Errorf("got:\n%q\nwant:\n%q", got, tc.after)
			}
			if _, errs := LoadConfig(ConfigSources{UserFile: path, Getenv: env(nil)}); len(errs) != 0 {
				t.Errorf("load: %v", errs)
			}
			if fi, _ := os.Stat(path); tc.before == "" && fi.Mode().Perm() != 0o600 {
				t.Errorf("new file mode %v", fi.Mode())
			}
		})
	}
}

func TestRemoveLastWithoutTrailingComma(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"b\": {\"command\": \"y\"} // b\n}}\n")
	if err := RemoveServer(path, "b"); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}\n}}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAddRefusesMalformedFileAndBadNames(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), "{\"mcpServers\": {\n  \"a\": \n}\n")
	if err := AddServer(path, "s", Entry{Command: "x"}); err == nil || !strings.Contains(err.Error(), "3:1") {
		t.Errorf("add to a malformed file = %v, want an error naming 3:1", err)
	}
	if got := readFile(t, path); got != "{\"mcpServers\": {\n  \"a\": \n}\n" {
		t.Errorf("malformed file was rewritten: %q", got)
	}
	if err := AddServer(path, "a__b", Entry{Command: "x"}); err == nil {
		t.Error("added a server named a__b")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
