//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHardLinkOutOfReadOnly (attack): a server that may write ./build hard-links a file of the
// read-only workspace (and a secret) into ./build and writes through the link, which would change
// the original. Landlock refuses a link that would reach a file with more rights than it had.
func TestHardLinkOutOfReadOnly(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	readme := filepath.Join(w.project, "README")
	link := filepath.Join(w.build, "readme-link")
	key := filepath.Join(w.build, "key-link")
	actions := []string{
		"link:" + readme + "=" + link,
		"write:" + link,
		"link:" + filepath.Join(w.home, ".ssh/id_rsa") + "=" + key,
		"read:" + key,
	}
	if u := runUnconfined(t, w, actions...); !u[actions[0]].OK || !u[actions[1]].OK {
		t.Fatalf("control: unconfined, the link or the write failed: %+v", u)
	}
	os.WriteFile(readme, []byte("project readme"), 0o644)
	os.Remove(link)
	os.Remove(key)
	got := runConfined(t, w, Profile{Write: []string{"./build"}}, Options{}, actions...)
	for _, a := range []string{actions[0], actions[2], actions[3]} { // the write makes a new file of build's own
		if r, ok := got[a]; !ok || r.OK {
			t.Errorf("%s: done from inside the sandbox or no result: %+v", a, r)
		}
	}
	if b, _ := os.ReadFile(readme); string(b) != "project readme" {
		t.Errorf("the workspace's README was changed: %q", b)
	}
}
