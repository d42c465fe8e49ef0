package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolveRefusesListedSecrets: a listed path that is, lies in or holds a secret is refused
// with a message naming it, never granted in part.
func TestResolveRefusesListedSecrets(t *testing.T) {
	w := newWorld(t)
	if err := os.Symlink(filepath.Join(w.home, ".ssh"), filepath.Join(w.project, "keys")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".pgpass", ".gemini/oauth_creds.json", ".m2/settings.xml", ".m2/repository/x.pom", ".gradle/gradle.properties", ".gradle/caches/x.jar"} {
		p := filepath.Join(w.home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Beside them, what a Java server reads is grantable.
	if _, err := Resolve(Profile{Read: []string{"~/.m2/repository", "~/.gradle/caches"}}, w.env("/bin/true")); err != nil {
		t.Errorf("Resolve(~/.m2/repository, ~/.gradle/caches) = %v", err)
	}
	for _, tc := range []struct {
		p    Profile
		want string
	}{
		{Profile{Read: []string{"~"}}, "it holds ~/.ssh"},
		{Profile{Read: []string{"~/.ssh/id_rsa"}}, "~/.ssh is never opened"},
		{Profile{Read: []string{"./keys"}}, "~/.ssh is never opened"}, // through a symlink
		{Profile{Write: []string{"~/.local/state/switchboard/sandboxes/other"}}, "~/.local/state/switchboard is never opened"},
		{Profile{Read: []string{"~/.local"}}, "it holds ~/.local/"},
		{Profile{Write: []string{"/"}}, "it holds"},
		{Profile{Read: []string{"./missing"}}, "does not exist"},
		// Credential files, not folders: the folder that holds one is refused naming it.
		{Profile{Read: []string{"~/.pgpass"}}, "~/.pgpass is never opened"},
		{Profile{Read: []string{"~/.gemini/oauth_creds.json"}}, "~/.gemini/oauth_creds.json is never opened"},
		{Profile{Read: []string{"~/.m2"}}, "it holds ~/.m2/settings"},
		{Profile{Write: []string{"~/.gradle"}}, "it holds ~/.gradle/gradle.properties"},
	} {
		_, err := Resolve(tc.p, w.env("/bin/true"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%+v) = %v, want an error containing %q", tc.p, err, tc.want)
		}
	}
}

// TestResolveHomeWorkspace: a workspace that is the home folder is granted child by child,
// without the secrets and without Switchboard's state.
func TestResolveHomeWorkspace(t *testing.T) {
	w := newWorld(t)
	env := w.env("/bin/true")
	env.Workspace = []string{w.home}
	plan, err := Resolve(Profile{}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range append(slices.Clone(plan.Read), plan.Write...) {
		for _, d := range plan.Denied {
			if within(d, root) && !(root == w.state && within(root, d)) {
				t.Errorf("granted root %s holds denied %s", root, d)
			}
		}
		if root == w.home {
			t.Errorf("the home folder itself is granted")
		}
	}
	for _, want := range []string{w.project, filepath.Join(w.home, "notes.txt")} {
		if !slices.Contains(plan.Read, want) {
			t.Errorf("%s not granted in %v", want, plan.Read)
		}
	}
	if !slices.Contains(plan.Write, w.state) || plan.TempDir != filepath.Join(w.state, "tmp") {
		t.Errorf("state %v, temp %s", plan.Write, plan.TempDir)
	}
}

// TestResolveCommandInHome: a command whose folder holds a secret is granted alone.
func TestResolveCommandInHome(t *testing.T) {
	w := newWorld(t)
	cmd := filepath.Join(w.home, "server.sh")
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plan, err := Resolve(Profile{}, w.env(cmd))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(plan.Read, cmd) || slices.Contains(plan.Read, w.home) {
		t.Errorf("read roots %v: want the command alone", plan.Read)
	}
}

// TestResolveHomeWorkspaceAgentTokens (attack): with the home folder open as the workspace, a
// sandboxed server must not read other AI tools' sign-ins kept there (Claude Code's
// ~/.claude/.credentials.json, GitHub Copilot's ~/.config/github-copilot, Codex's ~/.codex/auth.json).
func TestResolveHomeWorkspaceAgentTokens(t *testing.T) {
	w := newWorld(t)
	var secrets []string
	for _, rel := range []string{".claude/.credentials.json", ".config/github-copilot/apps.json", ".codex/auth.json"} {
		p := filepath.Join(w.home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"token":"x"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, p)
	}
	env := w.env("/bin/true")
	env.Workspace = []string{w.home}
	plan, err := Resolve(Profile{}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		for _, root := range append(slices.Clone(plan.Read), plan.Write...) {
			if within(s, root) {
				t.Errorf("%s is readable through the granted root %s", s, root)
			}
		}
	}
}

// TestResolveRelativeSymlinkOutside (attack): a repository's entry lists "./out" for writing and
// commits out as a symlink to a folder of the home (or retargets it later, which changes no
// fingerprint): the person was shown "./out", a folder of the repository. A relative path that
// leads out of its base folder through a symlink is refused, naming where it leads.
func TestResolveRelativeSymlinkOutside(t *testing.T) {
	w := newWorld(t)
	outside := filepath.Join(w.home, ".config", "autostart")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.project, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.build, filepath.Join(w.project, "inside")); err != nil {
		t.Fatal(err)
	}
	env := w.env("/bin/true")
	env.Base = w.project
	for _, p := range []Profile{{Write: []string{"./out"}}, {Read: []string{"out/"}}} {
		plan, err := Resolve(p, env)
		if err == nil {
			t.Errorf("Resolve(%+v) granted %v: want a refusal", p, plan.Write)
		} else if !strings.Contains(err.Error(), "~/.config/autostart") {
			t.Errorf("Resolve(%+v) = %v: want the error to name ~/.config/autostart", p, err)
		}
	}
	// A read through a symlink that stays inside the base folder is fine (a write is not:
	// TestResolveWriteLinkInside).
	plan, err := Resolve(Profile{Read: []string{"./inside"}}, env)
	if err != nil || !slices.Contains(plan.Read, w.build) && !slices.ContainsFunc(plan.Read, func(r string) bool { return within(w.build, r) }) {
		t.Errorf("Resolve(read ./inside) = %v, %v: want %s readable", plan, err, w.build)
	}
}
