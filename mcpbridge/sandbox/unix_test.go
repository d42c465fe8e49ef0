package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnixSocketsHidden: an agent's socket in a secret folder (gpg-agent's in ~/.gnupg) and one
// in /tmp (ssh-agent's, X11's) cannot be connected to: before Landlock ABI 9 connect(2) to a
// pathname socket is not a file access Landlock checks, so the launcher's mount namespace hides
// them.
func TestUnixSocketsHidden(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	listen := func(path string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		listenDropping(t, "unix", path)
	}
	gpg := filepath.Join(w.home, ".gnupg", "S.gpg-agent")
	tmpDir, err := os.MkdirTemp("", "ssh-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmpDir)
	agent := filepath.Join(tmpDir, "agent.1")
	listen(gpg)
	listen(agent)
	// Uncovering is tried too: the server is root in its user namespace when the host is root.
	got := runConfined(t, w, Profile{Network: Network{Mode: NetAll}}, Options{}, "umount:/tmp", "umount:"+w.home, "unix:"+gpg, "unix:"+agent, "fork", "unix:"+gpg, "unix:"+agent)
	for _, a := range []string{"umount:/tmp", "umount:" + w.home, "unix:" + gpg, "unix:" + agent, "grandchild unix:" + gpg, "grandchild unix:" + agent} {
		if r, ok := got[a]; !ok || r.OK {
			t.Errorf("%s: connected or missing: %+v", a, r)
		}
	}
	if u := runUnconfined(t, w, "unix:"+gpg, "unix:"+agent); !u["unix:"+gpg].OK || !u["unix:"+agent].OK {
		t.Errorf("control: unconfined connects failed: %+v", u)
	}
}
