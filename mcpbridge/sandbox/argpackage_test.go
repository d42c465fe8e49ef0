package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestResolveArgumentFolder: an argument that names a file (node server.js) lets the server read
// that file and its package, the folder above it with a package.json (or the like). Without a
// package, the file's whole folder was granted: a workspace-defined server with an argument
// "${userHome}/.gemini/settings.json" could read ~/.gemini/oauth_creds.json beside it under
// "sandboxed: no network", and hand it to the model as a result. Now only the file named, in a
// hidden folder of the home folder; a script in a plain folder still gets its folder.
func TestResolveArgumentFolder(t *testing.T) {
	w := newWorld(t)
	files := map[string]string{
		".gemini/settings.json":       "{}",
		".gemini/oauth_creds.json":    `{"refresh_token":"s3cret"}`,
		"tools/srv/package.json":      "{}",
		"tools/srv/lib/index.js":      "// server",
		"tools/srv/node_modules/x.js": "// dependency",
		"mcp/server.py":               "# server",
		"mcp/helpers.py":              "# module",
	}
	for name, body := range files {
		p := filepath.Join(w.home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := w.env("/bin/true")
	env.Args = []string{filepath.Join(w.home, ".gemini/settings.json"), filepath.Join(w.home, "tools/srv/lib/index.js"), filepath.Join(w.home, "mcp/server.py")}
	plan, err := Resolve(Profile{}, env)
	if err != nil {
		t.Fatal(err)
	}
	readable := func(p string) bool {
		return slices.ContainsFunc(append(slices.Clone(plan.Read), plan.Write...), func(r string) bool { return within(p, r) })
	}
	if creds := filepath.Join(w.home, ".gemini/oauth_creds.json"); readable(creds) {
		t.Errorf("%s is readable (read roots %v): an argument granted its whole folder", creds, plan.Read)
	}
	for _, p := range []string{".gemini/settings.json", "tools/srv/lib/index.js", "tools/srv/node_modules/x.js", "mcp/helpers.py"} {
		if !readable(filepath.Join(w.home, p)) {
			t.Errorf("%s is not readable (read roots %v)", p, plan.Read)
		}
	}
}
