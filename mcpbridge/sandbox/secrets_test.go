package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// secretsWorld is a project with dotenv files at several depths, their templates, and what a
// dependency or the build left.
func secretsWorld(t *testing.T) world {
	t.Helper()
	w := newWorld(t)
	w.writeProject(t, map[string]string{
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
	})
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

// What a server or a repository would do to get a covered file past the next start's look: move
// its folder under node_modules or deeper (with write access), reach it through a linked folder,
// or leave a folder where the empty file is made (which stopped the server from starting again).
func TestSecretsStayCovered(t *testing.T) {
	requireLandlock(t)
	w := secretsWorld(t)
	p := filepath.Join
	// A linked folder whose target lies deeper than the look goes.
	if err := os.MkdirAll(p(w.project, "p/q/r/s"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p(w.project, "p/q/r/s/.env"), []byte("LINKED=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("p/q/r/s", p(w.project, "deep")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p(w.state, "empty", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	moves := []string{"rename:" + p(w.project, "apps/web") + "=" + p(w.project, "node_modules/web"),
		"rename:" + p(w.project, "services") + "=" + p(w.project, "a/b/c/services")}
	got := runConfined(t, w, Profile{Write: []string{"."}}, Options{}, append(moves, "read:"+p(w.project, "deep/.env"))...)
	for _, m := range moves {
		if got[m].OK {
			t.Errorf("%s: moved", m)
		}
	}
	if r := got["read:"+p(w.project, "deep/.env")]; !r.OK || r.Body != "" {
		t.Errorf("deep/.env: %+v, want it empty", r)
	}
	got = runConfined(t, w, Profile{}, Options{}, "read:"+p(w.project, "apps/web/.env.production"), "read:"+p(w.project, "services/api/keys/.env.other"))
	for a, r := range got {
		if !r.OK || r.Body != "" {
			t.Errorf("%s: %+v, want it empty", a, r)
		}
	}
}

// A repository, or a server that can write there, that fills what the look can read (folders,
// or dotenv files ahead of the real ones) stops the server's start with a sentence saying why,
// instead of leaving a file uncovered. (Too many files to cover also overfilled the launcher's
// environment: every sandboxed server failed to start, saying nothing useful.)
func TestSecretsPastTheBoundsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill func(project string) error
		want string
	}{
		{"folders", func(project string) error {
			for i := range secretScan + 10 {
				if err := os.MkdirAll(filepath.Join(project, "-", strconv.Itoa(i)), 0o755); err != nil {
					return err
				}
			}
			return nil
		}, "more than 10000 folders"},
		{"files", func(project string) error {
			for i := range 1500 {
				if err := os.WriteFile(filepath.Join(project, ".env."+strings.Repeat("0", 60)+strconv.Itoa(i)), nil, 0o644); err != nil {
					return err
				}
			}
			return nil
		}, "more .env files than the sandbox can keep"},
	} {
		w := secretsWorld(t)
		if err := tc.fill(w.project); err != nil {
			t.Fatal(err)
		}
		if _, err := Resolve(Profile{}, w.env("/bin/sh")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Resolve: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A workspace that is the home folder: what the server cannot see (the secrets' folders, hidden)
// and the package managers' caches are not looked into, so their thousands of folders neither
// stop the server nor hide a project's .env.
func TestSecretsHomeWorkspace(t *testing.T) {
	w := secretsWorld(t)
	w.workspace = []string{w.home}
	for i := range secretScan + 10 {
		for _, d := range []string{".npm/_cacache", ".ssh/x"} {
			if err := os.MkdirAll(filepath.Join(w.home, d, strconv.Itoa(i)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	plan, err := Resolve(Profile{}, w.env("/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(plan.Secrets, filepath.Join(evalT(t, w.project), ".env")) {
		t.Errorf("Secrets = %q, want the project's .env among them", plan.Secrets)
	}
}
