package mcpbridge

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

type rootsAnswer struct {
	Roots       []mcp.Root `json:"roots"`
	ListChanged int        `json:"listChanged"`
}

func callRoots(t *testing.T, r *Registry, tool string) rootsAnswer {
	t.Helper()
	res, err := r.Call(context.Background(), tool, nil)
	if err != nil || res.IsError {
		t.Fatalf("Call %s = %+v, %v", tool, res, err)
	}
	var a rootsAnswer
	if err := json.Unmarshal([]byte(res.Text), &a); err != nil {
		t.Fatalf("roots answer %q: %v", res.Text, err)
	}
	return a
}

// TestRoots: a server asking roots/list gets Options.Roots as file URIs, and after RootsChanged
// it is told (notifications/roots/list_changed) and sees the new list; over stdio and HTTP.
func TestRoots(t *testing.T) {
	a, b := t.TempDir(), filepath.Join(t.TempDir(), "with space")
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) config.ServerConfig
	}{
		{"stdio", func(t *testing.T) config.ServerConfig { return stdioCfg("r", "--roots") }},
		{"streamable-http", func(t *testing.T) config.ServerConfig {
			return config.ServerConfig{Name: "r", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: startMCPTestHTTP(t, "--http", "--roots"),
				StartupTimeout: 20 * time.Second, CallTimeout: 20 * time.Second}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			folders := []string{a}
			r := newTestRegistry(t, Options{Roots: func() []string {
				mu.Lock()
				defer mu.Unlock()
				return append([]string(nil), folders...)
			}})
			if st := applyAndWait(t, r, tc.cfg(t)); st["r"].State != StateReady {
				t.Fatalf("status = %+v", st["r"])
			}
			got := callRoots(t, r, "mcp__r__roots")
			if diff := cmp.Diff([]mcp.Root{{URI: "file://" + filepath.ToSlash(a), Name: filepath.Base(a)}}, got.Roots); diff != "" {
				t.Errorf("roots (-want +got):\n%s", diff)
			}
			mu.Lock()
			folders = append(folders, b, "relative/ignored")
			mu.Unlock()
			r.RootsChanged()
			// The notification is sent in the background: ask until the server has it.
			for i := 0; got.ListChanged == 0; i++ {
				if i == 1000 {
					t.Fatal("notifications/roots/list_changed never reached the server")
				}
				got = callRoots(t, r, "mcp__r__roots")
			}
			want := []mcp.Root{
				{URI: "file://" + filepath.ToSlash(a), Name: filepath.Base(a)},
				{URI: "file://" + strings.ReplaceAll(filepath.ToSlash(b), " ", "%20"), Name: "with space"},
			}
			if diff := cmp.Diff(want, got.Roots); diff != "" {
				t.Errorf("roots after the change (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no roots capability", func(t *testing.T) {
		r := newTestRegistry(t, Options{})
		applyAndWait(t, r, stdioCfg("r", "--roots"))
		res, _ := r.Call(context.Background(), "mcp__r__roots", nil)
		if !res.IsError {
			t.Errorf("roots/list without the capability = %+v, want an error", res)
		}
		r.RootsChanged() // nothing to do, nothing breaks
	})
}
