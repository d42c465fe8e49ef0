package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codeWorld is a project that is a git repository with an editor's and direnv's settings: files
// that git, an editor or a shell run code from, outside any sandbox.
func codeWorld(t *testing.T) world {
	t.Helper()
	w := newWorld(t)
	w.writeProject(t, map[string]string{
		".git/HEAD":               "ref: refs/heads/main\n",
		".git/config":             "[core]\n\trepositoryformatversion = 0\n",
		".git/hooks/pre-commit":   "#!/bin/sh\nexit 0\n",
		".vscode/tasks.json":      "{}\n",
		".envrc":                  "export A=1\n",
		".pre-commit-config.yaml": "repos: []\n",
		"lefthook.yml":            "pre-commit: {}\n",
		"src/main.go":             "package main\n",
		"payload":                 "#!/bin/sh\necho pwned\n",
		"draft":                   "a draft\n",
		"lib/.git/config":         "[core]\n",
		"lib/lib.c":               "int x;\n",
	})
	return w
}

// writeProject makes each file (path relative to the project: body) with its folders.
func (w world) writeProject(t *testing.T, files map[string]string) {
	t.Helper()
	for path, body := range files {
		full := filepath.Join(w.project, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// codeEscapes are what a server granted the workspace would write to run code outside its
// sandbox later: a git hook (existing and new), git's config (core.hooksPath, core.fsmonitor), a
// commondir that points git at another config, VS Code's tasks and settings, direnv's .envrc,
// the hook managers' configs (pre-commit, lefthook: the hook git runs reads its commands there);
// and the ways around a read-only file: remove it, move its folder away, rename over it.
func codeEscapes(p string) []string {
	j := func(s string) string { return filepath.Join(p, s) }
	return []string{
		"write:" + j(".git/hooks/pre-commit"),
		"write:" + j(".git/hooks/post-checkout"),
		"write:" + j(".git/config"),
		"write:" + j(".git/commondir"),
		"write:" + j(".vscode/tasks.json"),
		"write:" + j(".vscode/settings.json"),
		"write:" + j(".envrc"),
		// The pre-commit and lefthook hooks git runs read their commands from these at each commit.
		"write:" + j(".pre-commit-config.yaml"),
		"write:" + j("lefthook.yml"),
		"remove:" + j(".git/config"),
		"rename:" + j(".git") + "=" + j("git-moved"),
		"rename:" + j(".vscode") + "=" + j("vscode-moved"),
		"rename:" + j("payload") + "=" + j(".envrc"),
		"write:" + j("lib/.git/config"),
	}
}

// codeAllowed are the workspace writes a server granted "." keeps.
func codeAllowed(p string) []string {
	j := func(s string) string { return filepath.Join(p, s) }
	return []string{
		"write:" + j("README"),
		"write:" + j("new.txt"),
		"write:" + j("src/new.go"),
		"rename:" + j("draft") + "=" + j("final"),
		"write:" + j("lib/lib.c"),
		"read:" + j(".git/config"),
		"read:" + j(".vscode/tasks.json"),
	}
}

// TestWorkspaceCodeStaysReadOnly: with "write": ["."], the files that make git, the editor or
// direnv run code outside the sandbox stay as they were, whatever the server tries; the rest of
// the workspace is writable.
func TestWorkspaceCodeStaysReadOnly(t *testing.T) {
	requireLandlock(t)
	w := codeWorld(t)
	escapes, allowed := codeEscapes(w.project), codeAllowed(w.project)
	// Taking a read-only mount away first (there is no unconfined control: outside, there is
	// no mount to take).
	umount := "umount:" + filepath.Join(w.project, ".git")
	got := runConfined(t, w, Profile{Write: []string{"."}}, Options{}, append(append([]string{umount}, escapes...), allowed...)...)
	if got[umount].OK {
		t.Errorf("%s: the read-only mount was taken away", umount)
	}
	plan, err := Resolve(Profile{Write: []string{"."}}, w.env(escaperPath(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range escapes {
		r := got[a]
		if r.OK {
			t.Errorf("%s: escaped", a)
			continue
		}
		// Visible when it bites: the server's own error explains as one sentence.
		if s, ok := plan.Explain(r.Err); !ok || !strings.Contains(s, "runs code from it") {
			t.Errorf("%s: refusal %q explains as %q", a, r.Err, s)
		} else if testing.Verbose() {
			t.Logf("%s: %s", a, s)
		}
	}
	for _, a := range allowed {
		if r := got[a]; !r.OK {
			t.Errorf("%s: refused: %+v", a, r)
		}
	}
	for path, body := range map[string]string{
		".git/config":           "[core]\n\trepositoryformatversion = 0\n",
		".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
		".envrc":                "export A=1\n",
	} {
		if b, err := os.ReadFile(filepath.Join(w.project, path)); err != nil || string(b) != body {
			t.Errorf("%s is now %q (%v)", path, b, err)
		}
	}
	for _, path := range []string{".git/hooks/post-checkout", ".git/commondir", ".vscode/settings.json", "git-moved"} {
		if _, err := os.Lstat(filepath.Join(w.project, path)); err == nil {
			t.Errorf("%s was made", path)
		}
	}
}

// TestWorkspaceCodeFromInside: a server started inside a folder kept read-only (its working
// folder .vscode) cannot write there by a relative path, beneath the read-only mount.
func TestWorkspaceCodeFromInside(t *testing.T) {
	requireLandlock(t)
	w := codeWorld(t)
	w.dir = filepath.Join(w.project, ".vscode")
	got := runConfined(t, w, Profile{Write: []string{"."}}, Options{}, "write:tasks.json", "write:settings.json", "write:../new.txt")
	for _, a := range []string{"write:tasks.json", "write:settings.json"} {
		if got[a].OK {
			t.Errorf("%s from inside .vscode: escaped", a)
		}
	}
	if !got["write:../new.txt"].OK {
		t.Errorf("write:../new.txt from inside .vscode: refused: %+v", got["write:../new.txt"])
	}
	if b, _ := os.ReadFile(filepath.Join(w.project, ".vscode/tasks.json")); string(b) != "{}\n" {
		t.Errorf(".vscode/tasks.json is now %q", b)
	}
}

// TestWorkspaceCodeWorksUnconfined is the control: unconfined, each of those escapes works.
func TestWorkspaceCodeWorksUnconfined(t *testing.T) {
	n := len(codeEscapes(""))
	// Each on a fresh world: an escape that succeeds (remove, rename) changes what the next finds.
	for i := range n {
		w := codeWorld(t)
		a := codeEscapes(w.project)[i]
		if r := runUnconfined(t, w, a)[a]; !r.OK {
			t.Errorf("unconfined %s failed: %+v", a, r)
		}
	}
}

// TestWorkspaceCodeGrantedByName: a path the entry lists by name is writable, and only that one;
// the trust sentence names it, and the fingerprint differs from the entry without it.
func TestWorkspaceCodeGrantedByName(t *testing.T) {
	requireLandlock(t)
	j := func(w world, s string) string { return filepath.Join(w.project, s) }
	for _, tc := range []struct {
		write            []string
		allowed, refused []string
	}{{
		write:   []string{".", ".git/hooks"},
		allowed: []string{"write:.git/hooks/post-checkout", "write:.git/hooks/pre-commit", "write:README"},
		refused: []string{"write:.git/config", "write:.git/commondir", "write:.vscode/tasks.json", "rename:.git=git-moved", "rename:.git/hooks=.git/hooks-moved"},
	}, {
		// A server that commits lists .git: git's own files are writable, its hooks and config not,
		// and .git cannot be moved away and made again without them.
		write:   []string{".", ".git"},
		allowed: []string{"write:.git/index", "write:.git/HEAD", "write:.git/COMMIT_EDITMSG"},
		refused: []string{"write:.git/config", "write:.git/hooks/pre-commit", "write:.git/hooks/post-checkout", "rename:.git=git-moved", "rename:.git/hooks=hooks-moved"},
	}} {
		w := codeWorld(t)
		abs := func(a string) string {
			verb, arg, _ := strings.Cut(a, ":")
			from, to, isRename := strings.Cut(arg, "=")
			if isRename {
				return verb + ":" + j(w, from) + "=" + j(w, to)
			}
			return verb + ":" + j(w, arg)
		}
		var actions []string
		for _, a := range append(append([]string{}, tc.refused...), tc.allowed...) {
			actions = append(actions, abs(a))
		}
		p := Profile{Write: tc.write}
		got := runConfined(t, w, p, Options{}, actions...)
		for _, a := range tc.allowed {
			if r := got[abs(a)]; !r.OK {
				t.Errorf("write %v: %s refused: %s", tc.write, a, r.Err)
			}
		}
		for _, a := range tc.refused {
			if r := got[abs(a)]; r.OK {
				t.Errorf("write %v: %s escaped", tc.write, a)
			}
		}
		listed := tc.write[1]
		if d := p.Describe(); !strings.Contains(d, listed+", which git") {
			t.Errorf("Describe() = %q, does not say that git runs %s", d, listed)
		}
		if p.Canonical() == (Profile{Write: []string{"."}}).Canonical() {
			t.Errorf("write %v has the fingerprint of write [.]", tc.write)
		}
	}
}

// TestResolveCodeLink: a repository whose .vscode is a symbolic link (a mount would land on its
// target and leave the link for the server to replace with a folder of its own) does not start
// under "write": ["."], and the message names it; listed by name, it does.
func TestResolveCodeLink(t *testing.T) {
	w := codeWorld(t)
	if err := os.RemoveAll(filepath.Join(w.project, ".vscode")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(w.project, ".vscode")); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(Profile{Write: []string{"."}}, w.env("/bin/sh"))
	if err == nil || !strings.Contains(err.Error(), "~/project/.vscode is a symbolic link") {
		t.Errorf("Resolve = %v, want a refusal naming ~/project/.vscode", err)
	}
	if _, err := Resolve(Profile{Write: []string{".", ".vscode"}}, w.env("/bin/sh")); err != nil {
		t.Errorf("listed by name: %v", err)
	}
}
