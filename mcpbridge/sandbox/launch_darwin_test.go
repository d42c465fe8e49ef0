package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// These run on macOS only (verified there by whoever has one; on Linux they are compile-checked
// with GOOS=darwin go vet).

func TestDarwinProfileText(t *testing.T) {
	plan := &Plan{
		Read:    []string{"/usr", `/Users/u/we"ird`},
		Write:   []string{"/Users/u/state"},
		Denied:  []string{"/Users/u/.ssh"},
		Network: Network{Mode: NetDomains, Domains: []string{"api.github.com"}},
	}
	got, err := darwinProfile(plan, 4242)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"(deny default)",
		`(allow file-read* (subpath "/Users/u/we\"ird"))`,
		`(allow file-read* file-write* (subpath "/Users/u/state"))`,
		`(allow network-outbound (remote tcp "localhost:4242"))`,
		`(deny file-read* file-write* (subpath "/Users/u/.ssh"))`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("profile lacks %s:\n%s", want, got)
		}
	}
	if strings.Index(got, `(deny file-read* file-write* (subpath "/Users/u/.ssh"))`) < strings.Index(got, `(subpath "/Users/u/state")`) {
		t.Errorf("the always-denied rules must come last (later rules win)")
	}
	if _, err := darwinProfile(&Plan{Read: []string{"/a\nb"}}, 0); err == nil {
		t.Errorf("a path with a newline was accepted")
	}
}

// TestDarwinProfileFixed: the paths git, an editor or a shell runs code from are denied after
// the write folder that holds them is allowed, a listed one inside is allowed again after that,
// and an anchor is denied itself only.
func TestDarwinProfileFixed(t *testing.T) {
	plan := &Plan{
		Write:   []string{"/Users/u/p"},
		Fixed:   []string{"/Users/u/p/.envrc", "/Users/u/p/.git", "/Users/u/p/.git/config"},
		Reopen:  []string{"/Users/u/p/.git/hooks"},
		Anchors: []string{"/Users/u/p/.vscode"},
	}
	got, err := darwinProfile(plan, 0)
	if err != nil {
		t.Fatal(err)
	}
	order := []string{
		`(allow file-read* file-write* (subpath "/Users/u/p"))`,
		`(deny file-write* (subpath "/Users/u/p/.envrc") (regex #"^/Users/u/p/\.[eE][nN][vV][rR][cC](/|$)"))`,
		`(deny file-write* (subpath "/Users/u/p/.git") (regex #"^/Users/u/p/\.[gG][iI][tT](/|$)"))`,
		`(deny file-write* (literal "/Users/u/p/.vscode"))`,
		`(deny file-write* (subpath "/Users/u/p/.git/config") (regex #"^/Users/u/p/\.[gG][iI][tT]/[cC][oO][nN][fF][iI][gG](/|$)"))`,
		`(allow file-read* file-write* (subpath "/Users/u/p/.git/hooks"))`,
	}
	at := -1
	for _, want := range order {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("profile lacks %s:\n%s", want, got)
		}
		if i < at {
			t.Errorf("%s comes too early (later rules win):\n%s", want, got)
		}
		at = i
	}
	if _, err := darwinProfile(&Plan{Write: []string{`/Users/u/a"b`}, Fixed: []string{`/Users/u/a"b/.git`}}, 0); err == nil {
		t.Errorf("a fixed path with a quote was accepted")
	}
}

// TestDarwinWorkspaceCode runs the escaper under sandbox-exec with "write": ["."]: the paths git,
// an editor or a shell runs code from stay as they were, there or not (.nvim.lua is not).
func TestDarwinWorkspaceCode(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	w := codeWorld(t)
	escapes := append(codeEscapes(w.project), "write:"+filepath.Join(w.project, ".nvim.lua"), "write:"+filepath.Join(w.project, ".GIT/config"))
	allowed := codeAllowed(w.project)
	got := runConfined(t, w, Profile{Write: []string{"."}}, Options{}, append(append([]string{}, escapes...), allowed...)...)
	for _, a := range escapes {
		if got[a].OK {
			t.Errorf("%s escaped", a)
		}
	}
	for _, a := range allowed {
		if !got[a].OK {
			t.Errorf("%s refused: %+v", a, got[a])
		}
	}
}

// TestDarwinEscapesFail runs the escaper under sandbox-exec.
func TestDarwinEscapesFail(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	w := newWorld(t)
	got := runConfined(t, w, Profile{Write: []string{"./build"}}, Options{},
		"read:"+filepath.Join(w.home, ".ssh/id_rsa"), "read:"+w.token,
		"write:"+filepath.Join(w.home, "planted"), "write:"+filepath.Join(w.build, "ok.txt"),
		"read:"+filepath.Join(w.project, "README"))
	for _, a := range []string{"read:" + filepath.Join(w.home, ".ssh/id_rsa"), "read:" + w.token, "write:" + filepath.Join(w.home, "planted")} {
		if got[a].OK {
			t.Errorf("%s escaped", a)
		}
	}
	for _, a := range []string{"write:" + filepath.Join(w.build, "ok.txt"), "read:" + filepath.Join(w.project, "README")} {
		if !got[a].OK {
			t.Errorf("%s refused: %+v", a, got[a])
		}
	}
}
