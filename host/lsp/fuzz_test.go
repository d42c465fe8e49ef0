package lsp_test

// Fuzz targets for the editor side of the host: LSP framing (FuzzFraming) and the method
// dispatcher (FuzzDispatch). Both drive lsp.Serve over an in-memory pipe, the way an editor
// drives `switchboard serve` over stdio. The properties:
//
//   - no input panics the host (a panic in any goroutine crashes the fuzz binary);
//   - no input hangs it: once the editor closes the pipe, Serve returns within a bound;
//   - everything the host writes is a well-formed Content-Length frame with a JSON body;
//   - while the framing is intact and the input did not ask to exit, the host keeps serving:
//     every well-formed request in the input gets an answer (a result or a clear error) with its
//     id, and so does a request sent after the input.
//
// Seed corpora: testdata/fuzz/FuzzFraming and testdata/fuzz/FuzzDispatch. Run with e.g.
//
//	go test ./host/lsp -run '^$' -fuzz '^FuzzDispatch$' -fuzztime 30s
//
// Inputs that could make the host start a process or read files outside the test's temp dir
// (server definitions, config files, workspace folders, a provider) are skipped: see unsafeBody.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/lsptest"
)

// Failure bounds (not timing assertions): generous so that a loaded CI machine never trips them.
const (
	probeBound = 20 * time.Second // the probe request must be answered within this
	exitBound  = 30 * time.Second // Serve must return within this after the editor closes the pipe
	// workerBound is the whole input's bound in a fuzz worker (-fuzz). Go kills a worker whose
	// input runs 10 s, and what the worker would have said goes nowhere: the run fails with
	// "fuzzing process hung or terminated unexpectedly" and no clue. Within it, a wait that
	// runs out fails the input with every goroutine's stack instead.
	workerBound = 8 * time.Second
)

// inWorker: this process is a fuzz worker (go test -fuzz), not the coordinator or a plain run.
func inWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

const probeID = "sbfuzz-probe"

func FuzzFraming(f *testing.F) {
	isolate(f)
	f.Add(lsptest.Frame([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)))
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 || declaresLargeBody(data) {
			return
		}
		frames, intact := splitFrames(data)
		if !intact && unsafeRaw(data) {
			return // the host may read the unparsed rest differently: check it as raw bytes
		}
		probe := intact
		for _, body := range frames {
			if unsafeBody(body) {
				return
			}
			if asksToExit(body) {
				probe = false
			}
		}
		h := startHost(t)
		var want []<-chan lsptest.Message
		if probe {
			seen := map[string]bool{}
			for _, body := range frames {
				if id := requestID(body); id != nil && !seen[lsptest.IDKey(id)] && lsptest.IDKey(id) != "s:"+probeID {
					seen[lsptest.IDKey(id)] = true
					want = append(want, h.lsp.Expect(id))
				}
			}
		}
		h.write(data)
		for _, ch := range want {
			h.await("a request in the input", ch)
		}
		if probe {
			h.probe()
		}
		h.finish()
	})
}

func FuzzDispatch(f *testing.F) {
	isolate(f)
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"switchboard.servers"}}`))
	f.Add(false, []byte(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`))
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"switchboard.elicit","arguments":[{"id":"e1","action":"accept","content":{"a":[1,{"b":null}]}}]}}`))
	f.Add(true, []byte(`{"jsonrpc":"2.0","id":4,"method":"workspace/executeCommand","params":{"command":"switchboard.elicitations","workDoneToken":{"x":1}}}`))
	f.Add(true, []byte(`{"jsonrpc":"2.0","method":"window/workDoneProgress/cancel","params":{"token":[1]}}`))
	f.Add(true, []byte("{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"textDocument\":{\"uri\":\"file:///a.go\",\"languageId\":\"go\",\"version\":1,\"text\":\"a\\nb\"}}}\x00"+
		"{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{\"textDocument\":{\"uri\":\"file:///a.go\",\"version\":2},\"contentChanges\":[{\"range\":{\"start\":{\"line\":9,\"character\":9},\"end\":{\"line\":0,\"character\":0}},\"text\":\"x\"}]}}"))
	// initialize: run the editor's initialize + initialized first, so the body reaches the
	// initialized dispatcher. body: one or more frame bodies separated by NUL bytes (which never
	// occur in valid JSON), each sent as one well-formed frame.
	f.Fuzz(func(t *testing.T, initialize bool, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		bodies := bytes.Split(body, []byte{0})
		if len(bodies) > 8 {
			return
		}
		probe := true
		for _, b := range bodies {
			if unsafeBody(b) {
				return
			}
			if asksToExit(b) {
				probe = false
			}
		}
		h := startHost(t)
		if initialize {
			h.initialize()
		}
		// Every well-formed request must get an answer (a result or a clear error) with its id.
		type pending struct {
			key string
			ch  <-chan lsptest.Message
		}
		var want []pending
		if probe {
			seen := map[string]bool{}
			for _, b := range bodies {
				id := requestID(b)
				if key := lsptest.IDKey(id); id != nil && !seen[key] && key != "s:"+probeID && key != "s:sbfuzz-init" {
					seen[key] = true
					want = append(want, pending{key, h.lsp.Expect(id)})
				}
			}
		}
		for _, b := range bodies {
			h.write(lsptest.Frame(b))
		}
		for _, w := range want {
			h.await("request "+w.key, w.ch)
		}
		if probe {
			h.probe()
		}
		h.finish()
	})
}

// requestID returns the id of body when it is one well-formed JSON-RPC 2.0 request (not a
// batch): an object with "jsonrpc": "2.0", a non-empty string "method" and an integer or string
// "id", each key once and spelled exactly. nil otherwise (no answer is required then).
func requestID(body []byte) json.RawMessage {
	if !json.Valid(body) {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil
		}
		k, _ := tok.(string)
		for _, name := range []string{"jsonrpc", "id", "method", "params"} {
			if strings.EqualFold(k, name) && (k != name || seen[name]) {
				return nil // decoders may disagree about such an object
			}
		}
		seen[k] = true
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil
		}
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.JSONRPC != "2.0" || m.Method == nil || *m.Method == "" {
		return nil
	}
	if lsptest.IDKey(m.ID) == "" {
		return nil
	}
	return m.ID
}

// isolate gives the fuzz process one temp dir for every file the host reads or writes (mcp.json,
// config.json, allowlist, trust store, and the state beside the pins: pins.json, eras.json,
// tasks.json; no audit log). The user's own state folder is never used: a fuzz host would follow
// (or mark lost) the tasks the person's windows left there, and each host watches its state
// folder for tasks.json, a watch whose start costs the kernel a walk over every name it caches
// for the folder (a long-used one holds tens of thousands): 4 minutes of fuzzing instead of 30 s. The environment is left alone: a fuzz
// worker's environment is inherited by anything it runs (a TestMain's go build among them).
func isolate(f *testing.F) {
	fuzzDir = f.TempDir()
}

var fuzzDir string

// fakeEditor is the editor end of an in-memory pipe to lsp.Serve.
type fakeEditor struct {
	t        *testing.T
	in       *io.PipeWriter // what the host reads
	done     chan error     // Serve's result
	lsp      *lsptest.Client
	deadline time.Time // in a fuzz worker: the input's end (workerBound); zero otherwise
}

// within is a channel that fires after d, or at the input's deadline in a fuzz worker if that
// comes first; stacks is what a failure then adds (in a worker: the bound, and every
// goroutine's stack).
func (e *fakeEditor) within(d time.Duration) (expired <-chan time.Time, stacks func() string) {
	if e.deadline.IsZero() {
		return time.After(d), func() string { return "" }
	}
	return time.After(min(d, time.Until(e.deadline))), func() string {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		return fmt.Sprintf(" (or the input's bound, %v in a fuzz worker)\n%s", workerBound, buf)
	}
}

type hostPipe struct {
	io.Reader
	io.Writer
	closeFn func() error
}

func (p hostPipe) Close() error { return p.closeFn() }

func startHost(t *testing.T) *fakeEditor {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rwc := hostPipe{Reader: inR, Writer: outW, closeFn: func() error {
		inR.Close()  // ignore error: in-memory pipe
		outW.Close() // ignore error: in-memory pipe
		return nil
	}}
	e := &fakeEditor{t: t, in: inW, done: make(chan error, 1)}
	if inWorker() {
		e.deadline = time.Now().Add(workerBound)
	}
	env := func(string) string { return "" }
	go func() {
		err := lsp.Serve(context.Background(), rwc, lsp.Options{
			Version: "fuzz",
			Options: host.Options{Env: env,
				LookupEnv:          func(string) (string, bool) { return "", false },
				UserConfigFile:     filepath.Join(fuzzDir, "mcp.json"),
				ProviderConfigFile: filepath.Join(fuzzDir, "config.json"),
				AllowlistPath:      filepath.Join(fuzzDir, "allow_tool"),
				TrustPath:          filepath.Join(fuzzDir, "trust.json"),
				PinsPath:           filepath.Join(fuzzDir, "pins.json"),
				NoAudit:            true,
			}})
		outW.Close() // ignore error: make sure our reader sees EOF
		e.done <- err
	}()
	// Every frame the host writes is checked; the host's own requests are answered like a plain
	// editor (null result), so nothing on the host side waits on us.
	e.lsp = lsptest.New(outR, inW, lsptest.Options{
		Answer:      refuse,
		OnBadOutput: func(err error) { t.Errorf("host wrote bad output: %v", err) },
	})
	return e
}

// refuse answers like a plain editor: nothing to offer, except that a prompt is refused at once
// (so an approval never waits for its timeout).
func refuse(m lsptest.Message) (any, bool) {
	if m.Method == "window/showMessageRequest" {
		var p struct {
			Actions []struct {
				Title string `json:"title"`
			} `json:"actions"`
		}
		json.Unmarshal(m.Params, &p) // ignore error: no actions, answer null
		var result any
		for _, a := range p.Actions {
			if a.Title == "Deny" || a.Title == "Don't trust" {
				result = map[string]string{"title": a.Title}
			}
		}
		return result, true
	}
	return nil, true
}

// await waits (bounded) for a response registered with lsp.Expect.
func (e *fakeEditor) await(what string, ch <-chan lsptest.Message) json.RawMessage {
	e.t.Helper()
	expired, stacks := e.within(probeBound)
	select {
	case m, ok := <-ch:
		if !ok {
			e.t.Fatalf("%s: the host's output ended before it answered", what)
		}
		return m.Raw
	case err := <-e.done:
		e.done <- err
		e.t.Fatalf("%s: the host stopped serving (Serve returned %v) before it answered", what, err)
	case <-expired:
		e.t.Fatalf("%s: no answer within %v: the host hangs%s", what, probeBound, stacks())
	}
	return nil
}

func (e *fakeEditor) write(b []byte) {
	e.lsp.WriteRaw(b) // ignore error: the host may legitimately have exited (exit notification)
}

// call sends a request and waits (bounded) for its response.
func (e *fakeEditor) call(id, method, params string) json.RawMessage {
	e.t.Helper()
	rawID, _ := json.Marshal(id) // ignore error: a string
	ch := e.lsp.Expect(rawID)
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, rawID, method)
	if params != "" {
		msg += `,"params":` + params
	}
	e.write(lsptest.Frame([]byte(msg + "}")))
	return e.await(method, ch)
}

func (e *fakeEditor) initialize() {
	e.t.Helper()
	m := e.call("sbfuzz-init", "initialize", `{"processId":null,"rootUri":null,"capabilities":{}}`)
	if !bytes.Contains(m, []byte(`"result"`)) {
		e.t.Fatalf("initialize failed: %s", trunc(m))
	}
	e.write(lsptest.Frame([]byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)))
}

// probe checks that the host still serves: an unknown request gets an error answer.
func (e *fakeEditor) probe() {
	e.t.Helper()
	m := e.call(probeID, "sbfuzz/probe", "")
	var r struct {
		ID    string `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m, &r); err != nil || r.ID != probeID || r.Error == nil {
		e.t.Fatalf("probe: want an error response with id %q, got %s", probeID, trunc(m))
	}
}

// finish closes the editor's end and checks that Serve returns within the bound.
func (e *fakeEditor) finish() {
	e.t.Helper()
	e.in.Close() // ignore error: in-memory pipe
	expired, stacks := e.within(exitBound)
	select {
	case <-e.done:
	case <-expired:
		e.t.Fatalf("Serve did not return within %v after the editor closed the pipe%s", exitBound, stacks())
	}
	expired, stacks = e.within(exitBound)
	select {
	case <-e.lsp.Done():
	case <-expired:
		e.t.Fatalf("the host's output did not end within %v after Serve returned%s", exitBound, stacks())
	}
}

// splitFrames reads data the way the host's framer (host/internal/lspconn) reads well-formed
// input. It returns the bodies of the frames that parse, and intact = the input ends exactly at a
// frame boundary, so a request written after it is read as a frame of its own. A malformed header
// (the host answers it and resynchronises on the next Content-Length, tested in lspconn), a frame
// over the 64 MiB bound or a body holding the next frame's header (both end the connection) make
// the input not intact: no answer is then required.
func splitFrames(data []byte) (bodies [][]byte, intact bool) {
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		n, err := mirrorContentLength(r)
		switch {
		case errors.Is(err, io.EOF):
			return bodies, true
		case err != nil:
			return bodies, false
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || embedsHeader(body) {
			return bodies, false
		}
		bodies = append(bodies, body)
	}
}

var errBadHeader = errors.New("invalid header")

// embedsHeader: a line of body ends in a Content-Length header (never valid JSON).
func embedsHeader(body []byte) bool {
	return regexp.MustCompile(`(?im)content-length[ \t]*:[ \t]*[0-9]+[ \t]*\r?\n`).Match(body)
}

func mirrorContentLength(r *bufio.Reader) (int, error) {
	length, have, consumed := 0, false, 0
	for lines := 0; ; lines++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 4<<10+2 || lines >= 32 {
			return 0, errBadHeader // header line or block over the bound
		}
		if err != nil {
			if err == io.EOF && len(line) == 0 && consumed == 0 {
				return 0, io.EOF
			}
			return 0, io.ErrUnexpectedEOF
		}
		consumed += len(line)
		if string(line) == "\n" || string(line) == "\r\n" {
			break
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, errBadHeader
		}
		if strings.EqualFold(string(name), "content-length") {
			value = bytes.Trim(value, " \t")
			if len(value) == 0 {
				return 0, errBadHeader
			}
			n := 0
			for _, c := range value {
				if c < '0' || c > '9' || n > (64<<20-int(c-'0'))/10 {
					return 0, errBadHeader
				}
				n = n*10 + int(c-'0')
			}
			length, have = n, true
		}
	}
	if !have || length <= 0 {
		return 0, errBadHeader
	}
	return length, nil
}

// declaresLargeBody reports a Content-Length between 1 MiB and 1 GiB anywhere in data: the
// host would wait for such a body until the stall timeout, which would only slow the fuzzer down
// (values over 64 MiB are refused from the header, and are kept).
func declaresLargeBody(data []byte) bool {
	low := bytes.ToLower(data)
	for {
		i := bytes.Index(low, []byte("content-length"))
		if i < 0 {
			return false
		}
		low = low[i+len("content-length"):]
		j := 0
		for j < len(low) && (low[j] == ':' || low[j] == ' ' || low[j] == '\t') {
			j++
		}
		for j < len(low)-1 && low[j] == '0' {
			j++
		}
		k := j
		for k < len(low) && low[k] >= '0' && low[k] <= '9' && k-j < 12 {
			k++
		}
		if n, err := strconv.ParseInt(string(low[j:k]), 10, 64); err == nil && n > 1<<20 && n <= 1<<30 {
			return true
		}
	}
}

// unsafeKeys can carry a server definition (a command to run), a file to read, a workspace
// folder to scan, or an LLM provider: a fuzzer must never get the host to start a process or
// reach outside its temp dir.
var unsafeKeys = []string{"servers", "configfiles", "provider", "rooturi", "rootpath", "workspacefolders", "added", "script"}

func unsafeBody(body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		// Not JSON for encoding/json: the host cannot read anything out of it either; still be
		// conservative about decoders that are laxer than encoding/json.
		return unsafeRaw(body)
	}
	return hasUnsafeKey(v)
}

// unsafeRaw is the byte-level version of unsafeBody: any unsafe key name, or any JSON escape
// (which could spell one), anywhere in b.
func unsafeRaw(b []byte) bool {
	low := bytes.ToLower(b)
	for _, k := range unsafeKeys {
		if bytes.Contains(low, []byte(k)) {
			return true
		}
	}
	return bytes.Contains(low, []byte(`\u`))
}

func hasUnsafeKey(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			lk := strings.ToLower(k)
			for _, u := range unsafeKeys {
				if lk == u {
					return true
				}
			}
			if hasUnsafeKey(vv) {
				return true
			}
		}
	case []any:
		for _, vv := range x {
			if hasUnsafeKey(vv) {
				return true
			}
		}
	}
	return false
}

// asksToExit reports whether body may contain an exit notification (the host then legitimately
// stops serving) or a shutdown request.
func asksToExit(body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return bytes.Contains(bytes.ToLower(body), []byte("exit"))
	}
	return hasMethod(v, "exit")
}

func hasMethod(v any, method string) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			if s, ok := vv.(string); ok && strings.EqualFold(k, "method") && s == method {
				return true
			}
		}
	case []any:
		for _, vv := range x {
			if hasMethod(vv, method) {
				return true
			}
		}
	}
	return false
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
