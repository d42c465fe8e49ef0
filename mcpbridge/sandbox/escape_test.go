package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestEscapesFail runs the escaper under the default profile (plus a listed write folder) and
// checks each escape fails, each allowed action works, and a setsid grandchild of a double fork
// is held exactly as its grandparent.
func TestEscapesFail(t *testing.T) {
	requireLandlock(t)
	testEscapes(t, true)
}

// TestEscapesWorkUnconfined is the control: the same escapes, unconfined, all succeed, so
// TestEscapesFail's refusals are the sandbox's doing and not the test's.
func TestEscapesWorkUnconfined(t *testing.T) {
	testEscapes(t, false)
}

func testEscapes(t *testing.T, confined bool) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port on the host, outside the sandbox
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	escapes := []string{
		"read:" + filepath.Join(w.home, ".ssh/id_rsa"),
		"read:" + filepath.Join(w.home, ".aws/credentials"),
		"read:" + w.token,
		"read:" + filepath.Join(w.other, "state.json"),
		"read:" + filepath.Join(w.home, "notes.txt"),
		"list:" + w.home,
		"write:" + filepath.Join(w.home, "planted"),
		"write:" + filepath.Join(w.project, "planted"),
		"write:" + filepath.Join(w.other, "state.json"),
		"write:" + filepath.Join(os.TempDir(), "sandbox-escaper-planted"),
		"connect:" + ln.Addr().String(),
		"exec:" + filepath.Join(w.home, ".ssh/id_rsa"),
		"signal:" + strconv.Itoa(os.Getpid()),
	}
	allowed := []string{
		"read:" + filepath.Join(w.project, "README"),
		"read:/etc/hostname",
		"write:" + filepath.Join(w.state, "tmp", "scratch"),
		"write:" + filepath.Join(w.build, "out.txt"),
		"exec:" + filepath.Join(w.project, "README"),
	}
	var actions []string
	actions = append(actions, escapes...)
	actions = append(actions, allowed...)
	actions = append(actions, "fork")
	actions = append(actions, escapes...)
	actions = append(actions, allowed...)
	if !confined {
		got := runUnconfined(t, w, actions...)
		for _, a := range escapes {
			if r := got[a]; !r.OK {
				t.Errorf("unconfined %s failed: %+v", a, r)
			}
		}
		return
	}
	got := runConfined(t, w, Profile{Write: []string{"./build"}}, Options{}, actions...)
	for _, prefix := range []string{"", "grandchild "} {
		for _, a := range escapes {
			r, ok := got[prefix+a]
			if !ok {
				t.Errorf("%s%s: no result", prefix, a)
			} else if testing.Verbose() {
				t.Logf("%s%s: %s", prefix, a, r.Err)
			}
			if r.OK {
				t.Errorf("%s%s: escaped (body %q)", prefix, a, r.Body)
			}
		}
		for _, a := range allowed {
			r, ok := got[prefix+a]
			if !ok || !r.OK {
				t.Errorf("%s%s: refused: %+v", prefix, a, r)
			}
		}
	}
	if _, ok := got["grandchild setsid"]; ok {
		t.Errorf("the grandchild did not lead its own session")
	}
	for _, planted := range []string{filepath.Join(w.home, "planted"), filepath.Join(w.project, "planted")} {
		if _, err := os.Stat(planted); err == nil {
			t.Errorf("%s was written", planted)
		}
	}
}
