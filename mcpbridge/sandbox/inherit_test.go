//go:build linux

package sandbox

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestInheritedFilesDoNotReachServer (attack): a descriptor the host holds without close-on-exec
// (one the editor leaked into it, or a library opened) is read by the server through the
// descriptor itself, which Landlock never checks: it checks paths at open. Here it is the user's
// ~/.ssh/id_rsa. The server must get its stdio and nothing else. An abstract Unix socket the host
// listens on (no path to hide) must not be reachable either.
func TestInheritedFilesDoNotReachServer(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	fd, err := syscall.Open(filepath.Join(w.home, ".ssh/id_rsa"), syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	name := "@switchboard-test-" + strconv.Itoa(syscall.Getpid())
	listenDropping(t, "unix", name)
	leak := "fd:" + strconv.Itoa(fd)
	abstract := "unix:" + name
	// The launcher (the namespace's init, pid 1) may still hold it: reopened through /proc, the
	// file's own path is what Landlock checks.
	viaInit := "read:/proc/1/fd/" + strconv.Itoa(fd)
	if u := runUnconfined(t, w, leak, abstract); !u[leak].OK || !u[abstract].OK {
		t.Fatalf("control: unconfined, the leaked descriptor or the abstract socket was not reachable: %+v", u)
	}
	got := runConfined(t, w, Profile{Network: Network{Mode: NetAll}}, Options{}, leak, abstract, viaInit, "fork", leak, abstract, viaInit)
	for _, a := range []string{leak, abstract, viaInit, "grandchild " + leak, "grandchild " + abstract, "grandchild " + viaInit} {
		if r, ok := got[a]; !ok || r.OK {
			t.Errorf("%s: reached from inside the sandbox or no result: %+v", a, r)
		}
	}
}
