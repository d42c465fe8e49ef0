package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// secretsWorld is a project with dotenv files at several depths, their templates, and what a
// dependency or the build left.
func secretsWorld(t *testing.T) world {
	t.Helper()
	w := newWorld(t)
	for path, body := range map[string]string{
		".env":                         "STRIPE_KEY=sk_live_1\n",
		".env.local":                   "DB_PASSWORD=hunter2\n",
		"apps/web/.env.production":     "API_TOKEN=t0k3n\n",
		".env.example":                 "STRIPE_KEY=\n",
		"apps/web/.env.sample":         "API_TOKEN=\n",
		"node_modules/dep/.env":        "A=1\n",
		"a/b/c/d/.env":                 "DEEP=1\n",
		"src/main.go":                  "package main\n",
		"config/.environment.md":       "docs\n",
		"services/api/.env.staging":    "S=1\n",
		"services/api/keys/.env.other": "O=1\n",
	} {
		full := filepath.Join(w.project, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link named like a secret is not followed: it would let the repository blank any file.
	if err := os.Symlink("src/main.go", filepath.Join(w.project, ".env.linked")); err != nil {
		t.Fatal(err)
	}
	return w
}

// The plan lists the dotenv files down to secretDepth folders, not templates, not what lies in
// dependencies, not what the entry lists by name.
func TestSecretsFound(t *testing.T) {
	w := secretsWorld(t)
	plan, err := Resolve(Profile{Read: []string{"./services/api/.env.staging"}}, w.env("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range plan.Secrets {
		rel, _ := filepath.Rel(evalT(t, w.project), s)
		got = append(got, rel)
	}
	want := []string{".env", ".env.local", "apps/web/.env.production", "services/api/keys/.env.other"}
	if !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
}

func evalT(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A sandboxed server granted the workspace reads its dotenv files empty and cannot write them;
// the templates, a file the entry lists, and the rest of the project it reads as they are.
func TestSecretsCovered(t *testing.T) {
	requireLandlock(t)
	w := secretsWorld(t)
	p := filepath.Join
	hidden := []string{".env", ".env.local", "apps/web/.env.production"}
	shown := map[string]string{".env.example": "STRIPE_KEY=\n", "src/main.go": "package main\n", "services/api/.env.staging": "S=1\n"}
	var actions []string
	for _, h := range hidden {
		actions = append(actions, "read:"+p(w.project, h), "write:"+p(w.project, h))
	}
	for s := range shown {
		actions = append(actions, "read:"+p(w.project, s))
	}
	// The state folder's empty file replaced by a link to a secret, as a server could leave it
	// for its next start.
	stateEmpty := p(w.state, "empty")
	os.Remove(stateEmpty)
	if err := os.Symlink(p(w.project, ".env"), stateEmpty); err != nil {
		t.Fatal(err)
	}
	got := runConfined(t, w, Profile{Read: []string{"./services/api/.env.staging"}, Write: []string{"apps"}}, Options{}, actions...)
	for _, h := range hidden {
		if r := got["read:"+p(w.project, h)]; !r.OK || r.Body != "" {
			t.Errorf("%s: read %+v, want it empty", h, r)
		}
		if r := got["write:"+p(w.project, h)]; r.OK {
			t.Errorf("%s: written", h)
		}
	}
	for s, body := range shown {
		if r := got["read:"+p(w.project, s)]; !r.OK || r.Body != body {
			t.Errorf("%s: read %+v, want %q", s, r, body)
		}
	}
	for _, h := range hidden {
		if b, err := os.ReadFile(p(w.project, h)); err != nil || len(b) == 0 {
			t.Errorf("%s outside the sandbox: %q, %v", h, b, err)
		}
	}
}

// A sandboxed server holds no capability, even when the host runs as root (a dev container):
// with them it could clone a folder's mount without what the sandbox mounted over it (open_tree)
// and read a covered .env or write a git hook kept read-only.
func TestNoCapabilities(t *testing.T) {
	requireLandlock(t)
	w := secretsWorld(t)
	got := runConfined(t, w, Profile{}, Options{}, "read:/proc/self/status")
	r := got["read:/proc/self/status"]
	if !r.OK {
		t.Fatalf("read /proc/self/status: %+v", r)
	}
	for _, line := range strings.Split(r.Body, "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			if v = strings.TrimSpace(v); strings.Trim(v, "0") != "" {
				t.Errorf("%s = %s (uid %d outside), want none", k, v, os.Getuid())
			}
		}
	}
}
