package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolveWriteLinkInside: a write path in the repository that is a symlink the repository
// ships, to somewhere else inside it, gave the server what the link names while the person saw
// (and trusted) the path as written: "./out" -> .git/hooks made the hooks writable with no word of
// code (the sandbox keeps code paths read-only only inside a listed folder, not the folder
// itself), and "./out" -> "." the whole repository, under "writes only ./out". The repository can
// also retarget the link later without changing the entry. Refused, naming where it leads; a
// plain folder and a read through such a link (the repository is readable anyway) still work.
func TestResolveWriteLinkInside(t *testing.T) {
	w := newWorld(t)
	hooks := filepath.Join(w.project, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": ".git/hooks", "all": ".", "tasks": ".vscode", "elsewhere": "build"} {
		if err := os.Symlink(target, filepath.Join(w.project, name)); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(w.project, ".vscode"), 0o755)
	env := w.env("/bin/true")
	env.Base = w.project
	for _, path := range []string{"./out", "out", "all", "./tasks", "elsewhere", filepath.Join(w.project, "out")} {
		p := Profile{Write: []string{path}}
		plan, err := Resolve(p, env)
		if err == nil {
			t.Errorf("Resolve(write %s) granted %v (shown as %q): want a refusal", path, plan.Write, p.Describe())
		} else if !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Resolve(write %s) = %v: want the error to say it is a symbolic link and where it leads", path, err)
		}
	}
	// Beside "." the link to the hooks is still refused: in "." they are kept read-only, named
	// through the link they would not be.
	if plan, err := Resolve(Profile{Write: []string{".", "./out"}}, env); err == nil {
		t.Errorf("Resolve(write ., ./out) granted %v: want a refusal", plan.Write)
	}
	plan, err := Resolve(Profile{Write: []string{"./build"}, Read: []string{"./out"}}, env)
	if err != nil || !slices.Contains(plan.Write, w.build) {
		t.Errorf("Resolve(write ./build, read ./out) = %v, %v: want %s writable", plan, err, w.build)
	}
	// A link into another folder the entry lists as it is grants nothing more than was shown.
	if _, err := Resolve(Profile{Write: []string{"./build", "./elsewhere"}}, env); err != nil {
		t.Errorf("Resolve(write ./build, ./elsewhere) = %v: want it granted", err)
	}
}
