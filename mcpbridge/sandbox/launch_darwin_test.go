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
