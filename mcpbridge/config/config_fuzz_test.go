package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzLoadConfig: any file content gives servers that are all valid, or errors that name the
// file, and never a panic. One bad entry never takes the others with it (see config_test.go).
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"a":{"command":"x","args":["${HOME}"]}}}`,
		`{"servers":{"h":{"type":"http","url":"http://127.0.0.1:1/mcp","headers":{"A":"${env:TOKEN}"}}}}`,
		`{"servers":{"s":{"type":"sse","url":"${URL:-http://x}"},"bad__name":{"command":"y"}}}`,
		`{"mcpServers":{"a":{"command":"x","unknown":1,"startupTimeoutSeconds":-3}}}`,
		`{"mcpServers":[]}`, `[]`, `null`, `{"mcpServers":{"a":null}}`, `{`, ``,
		`{"mcpServers":{"a":{"command":"x","env":{"K":"${MISSING}"},"enabledTools":["t"],"disabled":true}}}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	env := map[string]string{"HOME": "/home/u", "TOKEN": "t0k"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), ExtraFiles: []string{path}, Getenv: getenv})
		for _, c := range cfgs {
			if err := ValidServerName(c.Name); err != nil {
				t.Errorf("server %q loaded with an invalid name: %v", c.Name, err)
			}
			if !slices.Contains([]string{TransportStdio, TransportHTTP, TransportSSE}, c.Transport) {
				t.Errorf("server %q has transport %q", c.Name, c.Transport)
			}
			if c.Transport == TransportStdio && c.Command == "" || c.Transport != TransportStdio && c.URL == "" {
				t.Errorf("server %q loaded without what it runs: %+v", c.Name, c)
			}
		}
		if !slices.IsSortedFunc(cfgs, func(a, b ServerConfig) int { return cmpString(a.Name, b.Name) }) {
			t.Errorf("servers not sorted by name")
		}
		for _, err := range errs {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != path {
				t.Errorf("error does not name the file: %v", err)
			}
		}
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
