//go:build unix

package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestUnsafeDirRefused: a socket directory, or a runtime directory, that someone else could
// enter, plant or own is refused; nothing falls back to it.
func TestUnsafeDirRefused(t *testing.T) {
	uid := os.Geteuid()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, base string) // base is a fresh 0700 directory
		want  string
	}{
		{"runtime dir open to others", func(t *testing.T, base string) { os.Chmod(base, 0o755) }, "mode 0755"},
		{"socket dir open to others", func(t *testing.T, base string) {
			os.Mkdir(filepath.Join(base, "switchboard"), 0o777)
			os.Chmod(filepath.Join(base, "switchboard"), 0o777)
		}, "mode 0777"},
		{"socket dir a symlink", func(t *testing.T, base string) {
			other := t.TempDir()
			os.Chmod(other, 0o700)
			if err := os.Symlink(other, filepath.Join(base, "switchboard")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"socket dir a file", func(t *testing.T, base string) { os.WriteFile(filepath.Join(base, "switchboard"), nil, 0o600) }, "not a directory"},
		{"socket dir of another user", func(t *testing.T, base string) {
			if uid != 0 {
				t.Skip("needs root to give a directory away")
			}
			os.Mkdir(filepath.Join(base, "switchboard"), 0o700)
			if err := os.Chown(filepath.Join(base, "switchboard"), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "belongs to uid 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := testDir(t)
			tc.setup(t, base)
			_, err := dirFrom("XDG_RUNTIME_DIR", base, uid)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("dirFrom = %v, want an error saying %q", err, tc.want)
			}
			// The daemon refuses it too, and so does a window with it configured.
			dir := filepath.Join(base, "switchboard")
			if tc.name == "runtime dir open to others" {
				return // the socket directory itself would be fine
			}
			if err := Serve(context.Background(), Options{Dir: dir}); err == nil {
				t.Fatal("Serve accepted the directory")
			}
			if _, err := Attach(context.Background(), Config{Dir: dir, Start: daemonCmd(dir, time.Minute)}, request(launch())); err == nil {
				t.Fatal("Attach accepted the directory")
			}
		})
	}
	t.Run("relative runtime dir", func(t *testing.T) {
		if _, err := dirFrom("XDG_RUNTIME_DIR", "run/user", uid); err == nil {
			t.Fatal("a relative XDG_RUNTIME_DIR was accepted")
		}
	})
	t.Run("good", func(t *testing.T) {
		base := testDir(t)
		dir, err := dirFrom("XDG_RUNTIME_DIR", base, uid)
		if err != nil || dir != filepath.Join(base, "switchboard") {
			t.Fatalf("dirFrom = %q, %v", dir, err)
		}
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("created %v %v, want mode 0700", fi.Mode(), err)
		}
	})
}

// TestSocketMode: the socket is 0600 in its 0700 directory.
func TestSocketMode(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	fi, err := os.Lstat(PathsIn(dir).Sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v, want 0600", fi.Mode(), err)
	}
}

// copyTestBinary puts the test binary where another user may run it.
func copyTestBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(filepath.Dir(mcptestBin), "broker.test")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// asNobody runs the test binary in mode as uid 65534 and returns its first line of output.
func asNobody(t *testing.T, mode, dir string, env ...string) string {
	t.Helper()
	cmd := exec.Command(copyTestBinary(t), "-test.run=^$")
	cmd.Env = append([]string{modeVar + "=" + mode, dirVar + "=" + dir}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stderr = testWriter{t}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("as nobody: %v (%s)", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestOtherUserRefused: another OS user cannot reach the daemon. With the 0700 directory the
// connect fails; with directory and socket forced open (0777) the daemon still closes the
// connection before reading a byte (peer uid); and a daemon socket planted by another user is
// refused by the window before it sends its hello.
func TestOtherUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	dir, _ := serveInProcess(t, time.Minute)
	if got := asNobody(t, "dial", dir, "BROKER_TEST_RAW=1"); !strings.Contains(got, "permission denied") {
		t.Errorf("another user dialing through the 0700 directory: %q, want permission denied", got)
	}
	os.Chmod(dir, 0o777)
	os.Chmod(PathsIn(dir).Sock, 0o777)
	if got := asNobody(t, "dial", dir, "BROKER_TEST_RAW=1"); !strings.HasPrefix(got, "closed") {
		t.Errorf("another user dialing an open socket: %q, want the daemon to close at once", got)
	}
	os.Chmod(dir, 0o700)

	// A socket planted by user 65534 in a directory of ours (made writable for the plant).
	plant := testDir(t)
	os.Chmod(plant, 0o777)
	cmd := exec.Command(copyTestBinary(t), "-test.run=^$")
	cmd.Env = []string{modeVar + "=daemon", dirVar + "=" + filepath.Join(plant, "evil"), idleVar + "=1m"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "daemon listening") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	// Move the planted socket into a private directory of ours, as a socket left at the /tmp
	// fallback would be found.
	mine := testDir(t)
	if err := os.Rename(PathsIn(filepath.Join(plant, "evil")).Sock, PathsIn(mine).Sock); err != nil {
		t.Fatal(err)
	}
	_, err := Attach(context.Background(), Config{Dir: mine, Build: "test"}, request(launch()))
	if err == nil || !strings.Contains(err.Error(), "runs as uid 65534") {
		t.Fatalf("Attach to another user's socket = %v, want it refused before the hello", err)
	}
}

// TestLaunchRefused: the daemon refuses what it must never start, whatever a window says.
func TestLaunchRefused(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	ws := launch()
	ws.Source = SourceWorkspace
	ws.DefiningFolder, ws.Fingerprint = "/repo", "abc"
	rel := launch()
	rel.Command = "mcptest"
	for name, l := range map[string]Launch{"workspace server at user scope": ws, "relative command": rel} {
		if _, err := Attach(context.Background(), cfg, request(l)); err == nil || !strings.Contains(err.Error(), "launch refused") {
			t.Errorf("%s: Attach = %v, want the launch refused", name, err)
		}
	}
}

// TestInstanceKey: windows share a process only with identical launches: another value of one
// environment variable, or another folder set, gives another process.
func TestInstanceKey(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	base := launch()
	tokA, tokB := base, base
	tokA.Env = append([]string{"GITHUB_TOKEN=a"}, base.Env...)
	tokB.Env = append([]string{"GITHUB_TOKEN=b"}, base.Env...)
	tokA2 := tokA
	tokA2.Env = append(append([]string{}, base.Env...), "GITHUB_TOKEN=a") // same set, other order
	ws1, ws2 := base, base
	ws1.Scope, ws2.Scope = ScopeWorkspace, ScopeWorkspace
	ws1.Folders = []Folder{{URI: "file:///repo1"}}
	ws2.Folders = []Folder{{URI: "file:///repo2"}}
	pid := map[string]int{}
	for name, l := range map[string]Launch{"a": tokA, "a2": tokA2, "b": tokB, "ws1": ws1, "ws2": ws2} {
		w := attachWin(t, name, cfg, request(l))
		pid[name] = w.c.ServerPid()
		if name == "a" || name == "b" {
			w.initialize()
			w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"env","arguments":{"name":"GITHUB_TOKEN"}}}`)
			if fs := w.until("1"); text(fs[len(fs)-1]) != name {
				t.Errorf("window with GITHUB_TOKEN=%s saw %q", name, text(fs[len(fs)-1]))
			}
		}
	}
	if pid["a"] != pid["a2"] {
		t.Error("the same environment in another order got another process")
	}
	if pid["a"] == pid["b"] || pid["ws1"] == pid["ws2"] || pid["ws1"] == pid["a"] {
		t.Errorf("different launches shared a process: %v", pid)
	}
}

// TestSkew: a window of another build attaches and is told; another major is refused.
func TestSkew(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	w := attachWin(t, "new", Config{Dir: dir, Build: "1.5.0"}, request(launch()))
	if s := w.c.Skew(); !strings.Contains(s, "Switchboard test (this is 1.5.0)") {
		t.Errorf("Skew() = %q", s)
	}
	same := attachWin(t, "same", Config{Dir: dir, Build: "test"}, request(launch()))
	if s := same.c.Skew(); s != "" {
		t.Errorf("Skew() with the same build = %q", s)
	}
	c, err := dial(context.Background(), PathsIn(dir).Sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, err = handshake(context.Background(), c, c, c, []byte(`{"broker":2,"minor":0,"build":"future"}`+"\n"))
	if err == nil || !strings.Contains(err.Error(), "broker protocol 2 is not 1") {
		t.Errorf("hello of major 2: %v", err)
	}
	_, err = Attach(context.Background(), Config{Dir: dir, Build: "test", Require: []string{"teleport"}}, request(launch()))
	if err == nil || !strings.Contains(err.Error(), `lacks the feature "teleport"`) {
		t.Errorf("a required feature the daemon lacks: %v", err)
	}
}

// TestNoDescriptorLeaksToServers: a shared server started while windows are attached holds no
// descriptor of theirs. The windows' frames move on pipes the daemon makes and passes: a server
// that inherited one could read another window's calls, or write answers into it. Every
// descriptor a server has beyond its stdin, stdout and stderr must be one it opened itself (no
// pipe, no socket).
func TestNoDescriptorLeaksToServers(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	// What this process inherited from whoever ran it (a pipe left open by a shell's job
	// control, say) is passed on by every program it starts: not the daemon's doing.
	inherited := map[string]bool{}
	self, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range self {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil {
			inherited[target] = true
		}
	}
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	a := attachWin(t, "A", cfg, request(launch()))
	b := attachWin(t, "B", cfg, request(launch()))
	a.initialize()
	b.initialize()
	for _, w := range []*win{a, b} {
		if !w.c.usesPipes() {
			t.Fatalf("%s: the attachment's frames are not on pipes", w.name)
		}
	}
	// Started after A's and B's pipes exist, from the same daemon.
	c := attachWin(t, "C", cfg, request(launch("--instructions", "other")))
	c.initialize()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(c.c.ServerPid()) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, err := os.Readlink("/proc/" + strconv.Itoa(c.c.ServerPid()) + "/fd/" + fd.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if n := fd.Name(); n != "0" && n != "1" && n != "2" && !inherited[target] && (strings.HasPrefix(target, "pipe:") || strings.HasPrefix(target, "socket:")) {
			t.Errorf("the server holds descriptor %s (%s) it did not open itself", n, target)
		}
	}
}

// TestWindowWithoutPipes: a window of an older build (no featurePipes in its hello) still gets
// its frames on the socket, beside a window on pipes, each only its own.
func TestWindowWithoutPipes(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	offerPipes = false
	old := attachWin(t, "old", cfg, request(launch()))
	offerPipes = true
	cur := attachWin(t, "new", cfg, request(launch()))
	if old.c.usesPipes() || !cur.c.usesPipes() {
		t.Fatalf("pipes: old window %v, new window %v; want false, true", old.c.usesPipes(), cur.c.usesPipes())
	}
	for _, w := range []*win{old, cur} {
		w.initialize()
	}
	big := strings.Repeat("x", 200<<10) // larger than every buffer on the way: read in parts
	old.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`)
	cur.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"new"}}}`)
	if fs := old.until("1"); text(fs[len(fs)-1]) != big {
		t.Errorf("the old window's call: %.200s", fs[len(fs)-1].raw)
	}
	if fs := cur.until("1"); text(fs[len(fs)-1]) != "new" {
		t.Errorf("the new window's call: %.200s", fs[len(fs)-1].raw)
	}
}

// TestPolicyChangeDuringAttach: the organisation's policy changes while a window's attach is
// past the daemon's policy check but has not yet found or started its instance. The policy's
// recheck runs meanwhile and finds no instance to stop; the attach must not then start the
// server the policy now blocks (before, it did, and the server ran until the next change).
func TestPolicyChangeDuringAttach(t *testing.T) {
	dir := testDir(t)
	var blocked, first atomic.Bool
	inAdmit, release := make(chan struct{}), make(chan struct{})
	admit := func(Request) error {
		decided := blocked.Load() // the policy as read now
		if first.CompareAndSwap(false, true) {
			close(inAdmit)
			<-release // the policy file is rewritten while this attach goes on with the old one
		}
		if decided {
			return errors.New("blocked (rule test)")
		}
		return nil
	}
	recheck := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := Serve(ctx, Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: closeOnWrite(ready), Admit: admit, Recheck: recheck,
			Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-ready
	type result struct {
		c   *Conn
		err error
	}
	attached := make(chan result, 1)
	go func() {
		c, err := Attach(context.Background(), Config{Dir: dir, Build: "test"}, request(launch()))
		attached <- result{c, err}
	}()
	<-inAdmit
	blocked.Store(true)
	recheck <- struct{}{} // taken by the daemon's recheck loop
	recheck <- struct{}{} // taken only once the first recheck has looked at every instance
	close(release)
	r := <-attached
	if r.err == nil {
		defer r.c.Close()
		pid := r.c.ServerPid()
		t.Fatalf("a window attached to a server the policy blocked during its attach (pid %d running: %v)", pid, !gone(pid))
	}
	if !strings.Contains(r.err.Error(), "blocked (rule test)") {
		t.Errorf("Attach = %v, want the policy's rule", r.err)
	}
}

// TestStarterDescriptorsNotPassedOn: a descriptor the first window's process holds without
// close-on-exec (one its editor left it: Go's own are all close-on-exec, an editor's need not be)
// goes to the daemon that window starts, as any exec passes it; the daemon must not pass it on
// to the shared servers it starts for every window: a server started for another window would
// hold a pipe of the first one's editor.
func TestStarterDescriptorsNotPassedOn(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no close-on-exec: as an editor may leave one
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	leaked, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(p[0]))
	if err != nil {
		t.Fatal(err)
	}
	dir := testDir(t)
	w := attachWin(t, "A", Config{Dir: dir, Build: "test", Start: daemonCmd(dir, time.Minute)}, request(launch()))
	t.Cleanup(func() {
		Stop(context.Background(), Config{Dir: dir})
		waitFor(t, "the daemon to exit", func() bool { return gone(w.c.DaemonPid()) })
	})
	w.initialize()
	holds := func(pid int) bool {
		fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		for _, fd := range fds {
			if target, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name()); target == leaked {
				return true
			}
		}
		return false
	}
	if !holds(w.c.DaemonPid()) {
		t.Log("the daemon did not inherit the descriptor (nothing to pass on)")
	}
	if holds(w.c.ServerPid()) {
		t.Errorf("the shared server holds %s, a descriptor of the window that started the daemon", leaked)
	}
}

// TestWindowDescriptorsRefused: a window (of any build) that sends descriptors of its own with
// its hello, or with a frame on the socket, gives the daemon none of them: the daemon reads the
// socket without taking descriptors, so the kernel closes what came; and the window still gets
// exactly its two pipes.
func TestWindowDescriptorsRefused(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	dir, _ := serveInProcess(t, time.Minute) // in this process: a descriptor it took shows below
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(r.Fd())))
	held := func() bool {
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == target {
				return true
			}
		}
		return false
	}
	req := request(launch())
	for _, pipes := range []bool{true, false} {
		c, err := dial(context.Background(), PathsIn(dir).Sock)
		if err != nil {
			t.Fatal(err)
		}
		h := hello{Broker: Major, Minor: Minor, Build: "test", Instance: &req}
		if pipes {
			h.Features = []string{featurePipes, featurePipes} // asked twice, too
		}
		line, _ := json.Marshal(h)
		rights := syscall.UnixRights(int(r.Fd()), int(w.Fd()), int(r.Fd()))
		if _, _, err := c.WriteMsgUnix(append(line, '\n'), rights, nil); err != nil {
			t.Fatal(err)
		}
		fr := &fdReader{c: c}
		br := bufio.NewReader(fr)
		var reply helloReply
		for reply.Instance == "" {
			l, err := readFrame(br, maxHello)
			if err != nil {
				t.Fatalf("pipes %v: reply: %v", pipes, err)
			}
			reply = helloReply{}
			json.Unmarshal(l, &reply)
			if reply.Error != "" {
				t.Fatalf("pipes %v: %s", pipes, reply.Error)
			}
		}
		if reply.Pipes != pipes || len(fr.fds) != map[bool]int{true: 2, false: 0}[pipes] {
			t.Errorf("pipes %v: reply.Pipes %v with %d descriptors", pipes, reply.Pipes, len(fr.fds))
		}
		if !pipes {
			// A frame on the socket with descriptors attached: relayed, the descriptors not.
			f := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
			if _, _, err := c.WriteMsgUnix([]byte(f), rights, nil); err != nil {
				t.Fatal(err)
			}
			if l, err := readFrame(br, maxFrame); err != nil || !strings.Contains(string(l), `"id":1`) {
				t.Fatalf("ping on the socket: %q %v", l, err)
			}
		}
		for _, fd := range fr.fds {
			if l, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); l == target {
				t.Errorf("pipes %v: the daemon passed back the window's own descriptor", pipes)
			}
		}
		closeFDs(fr.fds)
		defer c.Close()
	}
	r.Close()
	w.Close()
	if held() {
		t.Error("the daemon holds a descriptor a window sent it")
	}
}
