//go:build unix

package broker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// mcptestBin is cmd/mcptest, built once by TestMain.
var mcptestBin string

// Helper modes of the test binary (re-exec): a daemon, a window.
const (
	modeVar   = "BROKER_TEST_MODE"
	dirVar    = "BROKER_TEST_DIR"
	idleVar   = "BROKER_TEST_IDLE"
	launchVar = "BROKER_TEST_LAUNCH"
)

func TestMain(m *testing.M) {
	switch os.Getenv(modeVar) {
	case "daemon":
		os.Exit(daemonMain())
	case "window":
		os.Exit(windowMain())
	case "dial":
		os.Exit(dialMain())
	}
	dir, err := os.MkdirTemp("", "broker-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // the second user's test runs binaries from here
	mcptestBin = filepath.Join(dir, "mcptest")
	out, err := exec.Command("go", "build", "-o", mcptestBin, "github.com/switchboard-dev/switchboard/cmd/mcptest").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build mcptest: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// daemonMain is the daemon as `switchboard daemon` will run it.
func daemonMain() int {
	idle, _ := time.ParseDuration(os.Getenv(idleVar))
	o := Options{Dir: os.Getenv(dirVar), Build: "test", Idle: idle,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if f := ReadyFromEnv(); f != nil {
		o.Ready = f
	}
	if p := os.Getenv(cpuProfileVar); p != "" { // BenchmarkRelay
		f, err := os.Create(p)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if p := os.Getenv(memProfileVar); p != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(p); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0) // ignore error: a benchmark's aid
				f.Close()
			}
		}()
	}
	if err := Serve(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// windowMain attaches as a window, starts a long call and says "running" on stdout once the
// server reports progress on it (the call is in flight upstream); then it waits to be killed.
func windowMain() int {
	var req Request
	if err := json.Unmarshal([]byte(os.Getenv(launchVar)), &req); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := Attach(context.Background(), Config{Dir: os.Getenv(dirVar), Build: "test"}, req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"w","version":"1"}}}`)
	fmt.Fprintln(c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":30},"_meta":{"progressToken":"w"}}}`)
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 1
		}
		if bytes.Contains(line, []byte("notifications/progress")) {
			fmt.Println("running")
			select {}
		}
	}
}

// dialMain dials the socket in BROKER_TEST_DIR (as whatever user it runs as) and reports what
// happened on stdout: "refused: ..." from the client's own check, "closed" when the daemon
// closed the connection without a reply, or "reply: ...".
func dialMain() int {
	sock := PathsIn(os.Getenv(dirVar)).Sock
	if os.Getenv("BROKER_TEST_RAW") == "" {
		_, err := dial(context.Background(), sock)
		if err != nil {
			fmt.Println("refused:", err)
			return 0
		}
		fmt.Println("accepted")
		return 0
	}
	c, err := (&netDialer{}).dial(sock)
	if err != nil {
		fmt.Println("dial:", err)
		return 0
	}
	fmt.Fprintln(c, `{"broker":1,"minor":0,"build":"intruder","op":"status"}`)
	b, err := io.ReadAll(c)
	if len(b) == 0 {
		fmt.Println("closed", err)
		return 0
	}
	fmt.Println("reply:", string(b))
	return 0
}

// launch is a user-scope launch of mcptest with args.
func launch(args ...string) Launch {
	return Launch{Command: mcptestBin, Args: args, Env: []string{"PATH=" + os.Getenv("PATH")}, Scope: ScopeUser, Source: SourceUser}
}

func request(l Launch) Request {
	return Request{Launch: l, Name: "t", ProtocolVersion: "2025-11-25",
		Capabilities: json.RawMessage(`{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{"listChanged":true}}`)}
}

// testDir is a fresh private socket directory (short: socket paths are limited to 108 bytes).
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveInProcess runs a daemon in this process until the test ends; it returns the directory
// and a channel closed when Serve returned.
func serveInProcess(t *testing.T, idle time.Duration) (string, chan struct{}) {
	t.Helper()
	dir := testDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := Serve(ctx, Options{Dir: dir, Build: "test", Idle: idle, Ready: closeOnWrite(ready),
			Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case <-done:
		t.Fatal("Serve returned before it was ready")
	}
	return dir, done
}

type closeOnWrite chan struct{}

func (c closeOnWrite) Write(p []byte) (int, error) { close(c); return len(p), nil }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// daemonCmd starts the test binary as a daemon in dir (Config.Start).
func daemonCmd(dir string, idle time.Duration) func(string) *exec.Cmd {
	return func(string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{modeVar + "=daemon", dirVar + "=" + dir, idleVar + "=" + idle.String()}
		return cmd
	}
}

// frame is one JSON-RPC message a window received.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    []byte
}

// win is a test window: it writes requests and collects every frame it receives.
type win struct {
	t      *testing.T
	name   string
	c      *Conn
	wmu    sync.Mutex
	frames chan frame
	ended  chan struct{} // closed when the connection ended
	err    error         // why; set before ended is closed
}

func attachWin(t *testing.T, name string, cfg Config, req Request) *win {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Attach(ctx, cfg, req)
	if err != nil {
		t.Fatalf("%s: Attach: %v", name, err)
	}
	w := &win{t: t, name: name, c: c, frames: make(chan frame, 10000), ended: make(chan struct{})}
	t.Cleanup(func() { c.Close() })
	go w.readLoop()
	return w
}

func (w *win) readLoop() {
	br := bufio.NewReaderSize(w.c, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			w.err = err
			close(w.ended)
			return
		}
		var f frame
		if err := json.Unmarshal(line, &f); err != nil {
			w.t.Errorf("%s: a frame that is not JSON: %q", w.name, line)
			continue
		}
		f.raw = line
		w.frames <- f
	}
}

func (w *win) send(format string, a ...any) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if _, err := fmt.Fprintf(w.c, format+"\n", a...); err != nil {
		w.t.Errorf("%s: write: %v", w.name, err)
	}
}

// next returns the next frame (failing the test if none comes in 30 s: a hang, not a timing).
func (w *win) next() frame {
	w.t.Helper()
	select {
	case f := <-w.frames:
		return f
	case <-time.After(30 * time.Second):
		w.t.Fatalf("%s: no frame", w.name)
	}
	return frame{}
}

// until returns the frames up to and including the response to id.
func (w *win) until(id string) []frame {
	w.t.Helper()
	var got []frame
	for {
		f := w.next()
		got = append(got, f)
		if string(f.ID) == id && f.Method == "" {
			return got
		}
	}
}

func (w *win) initialize() {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, w.name)
	fs := w.until(`"init"`)
	last := fs[len(fs)-1]
	if !bytes.Contains(last.Result, []byte(`"mcptest"`)) {
		w.t.Fatalf("%s: initialize result %s", w.name, last.raw)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// text is the first text block of a tools/call result.
func text(f frame) string {
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if json.Unmarshal(f.Result, &r) != nil || len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// gone reports whether pid has exited (a zombie counts: it runs nothing and holds nothing).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// waitFor waits until cond holds, looking every few milliseconds (the event is in another
// process: a file written, a process gone); it fails the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("waited 20 s for %s", what)
		case <-tick.C:
		}
	}
}

// tagged lists the live processes whose owner tag names host pid.
func tagged(host int) []int {
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || gone(pid) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + d.Name() + "/environ")
		if bytes.Contains(env, []byte("\x00"+stdio.OwnerVar+"="+strconv.Itoa(host)+".")) || bytes.HasPrefix(env, []byte(stdio.OwnerVar+"="+strconv.Itoa(host)+".")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// twoWin is a daemon in this process with windows A and B attached to one server, both
// initialized: what most tests of the daemon's routing start from (twoWindows).
type twoWin struct {
	dir    string
	cfg    Config
	req    Request
	record string // the file where the server records what it read (--record)
	a, b   *win
}

// twoWindows starts a daemon in this process and attaches windows A and B, initialized, to the
// server launched with args and --record.
func twoWindows(t *testing.T, args ...string) twoWin {
	t.Helper()
	dir, _ := serveInProcess(t, time.Minute)
	w := twoWin{dir: dir, cfg: Config{Dir: dir, Build: "test"}, record: dir + "/record"}
	w.req = request(launch(append(args, "--record", w.record)...))
	w.a = attachWin(t, "A", w.cfg, w.req)
	w.b = attachWin(t, "B", w.cfg, w.req)
	w.a.initialize()
	w.b.initialize()
	return w
}
