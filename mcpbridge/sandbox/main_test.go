package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestMain makes the test binary a launcher too, as cmd/switchboard's main is.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

var escaper struct {
	once sync.Once
	path string
	err  error
}

// escaperPath builds internal/escaper once per test binary run.
func escaperPath(t testing.TB) string {
	t.Helper()
	escaper.once.Do(func() {
		dir, err := os.MkdirTemp("", "escaper")
		if err != nil {
			escaper.err = err
			return
		}
		escaper.path = filepath.Join(dir, "escaper")
		out, err := exec.Command("go", "build", "-o", escaper.path, "./internal/escaper").CombinedOutput()
		if err != nil {
			escaper.err = fmt.Errorf("build escaper: %v\n%s", err, out)
		}
	})
	if escaper.err != nil {
		t.Fatal(escaper.err)
	}
	return escaper.path
}

type tryResult struct {
	Action string `json:"action"`
	OK     bool   `json:"ok"`
	Err    string `json:"err"`
	Body   string `json:"body"`
}

// world is a fake user: a home with secrets, Switchboard's state with a token file, a project.
type world struct {
	home, project, build, state, token, stateRoot, other string
	// dir is the server's working folder when not the project.
	dir string
	// workspace are the open workspace folders when not the project alone.
	workspace []string
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := t.TempDir()
	w := world{home: filepath.Join(root, "home")}
	w.project = filepath.Join(w.home, "project")
	w.build = filepath.Join(w.project, "build")
	w.stateRoot = filepath.Join(w.home, ".local/state/switchboard")
	w.state = filepath.Join(w.stateRoot, "sandboxes", "escaper")
	w.other = filepath.Join(w.stateRoot, "sandboxes", "other")
	w.token = filepath.Join(w.stateRoot, "oauth-tokens.json")
	for _, d := range []string{w.build, filepath.Join(w.home, ".ssh"), w.state, w.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, body := range map[string]string{
		filepath.Join(w.home, ".ssh/id_rsa"):      "PRIVATE KEY",
		w.token:                                   `{"token":"s3cret"}`,
		filepath.Join(w.other, "state.json"):      "other server's state",
		filepath.Join(w.project, "README"):        "project readme",
		filepath.Join(w.home, "notes.txt"):        "notes",
		filepath.Join(w.home, ".aws/credentials"): "aws",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w world) env(command string) Env {
	ws := []string{w.project}
	if w.workspace != nil {
		ws = w.workspace
	}
	return Env{
		Home:      w.home,
		Workspace: ws,
		StateDir:  w.state,
		Protected: []string{w.stateRoot},
		Command:   command,
	}
}

// requireLandlock skips only where the kernel truly lacks what a sandbox needs.
func requireLandlock(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the Landlock launcher is Linux only")
	}
	if err := Available(); err != nil {
		t.Skipf("kernel lacks Landlock: %v", err)
	}
}

// runUnconfined runs the escaper as it is.
func runUnconfined(t *testing.T, w world, actions ...string) map[string]tryResult {
	t.Helper()
	cmd := exec.Command(escaperPath(t), actions...)
	cmd.Dir = w.project
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("escaper: %v", err)
	}
	return parseResults(t, out)
}

func parseResults(t *testing.T, out []byte) map[string]tryResult {
	t.Helper()
	got := map[string]tryResult{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r tryResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("escaper printed %q: %v", line, err)
		}
		got[r.Action] = r
	}
	return got
}

// runConfined runs the escaper sandboxed under p and returns its results by action.
func runConfined(t *testing.T, w world, p Profile, opts Options, actions ...string) map[string]tryResult {
	t.Helper()
	esc := escaperPath(t)
	plan, err := Resolve(p, w.env(esc))
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	cmd := exec.Command(esc, actions...)
	cmd.Dir = w.project
	if w.dir != "" {
		cmd.Dir = w.dir
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Wrap(cmd, plan, opts)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	defer sb.Close()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := sb.Started(); err != nil {
		cmd.Wait()
		t.Fatalf("Started: %v", err)
	}
	got := map[string]tryResult{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var r tryResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("escaper printed %q: %v", sc.Text(), err)
		}
		got[r.Action] = r
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("escaper: %v\nstderr: %s", err, stderr.String())
	}
	return got
}

// listenDropping listens on network addr for the rest of the test, accepting and closing every
// connection: something real for a server in the sandbox to reach, or to fail to reach.
func listenDropping(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}
