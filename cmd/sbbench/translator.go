//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
)

// childTranslator is `sbbench _translate CMD ARGS...`: the least an LSP host in a process of its
// own can do for switchboard.callTool, measured beside the host. It starts CMD as an MCP server
// over stdio, initializes it, and then, as the editor's language server, answers initialize,
// shutdown, switchboard.servers (its one server, ready) and switchboard.callTool: each call is
// sent to the server as tools/call with the editor's arguments as they came (not checked, not
// compacted), and the answer goes back in the contract's ToolResult shape, its first text block
// as the text and its content blocks as they came. Nothing else: no gate, no audit, no escaping,
// no validation. It is not a host anyone could ship; it is the floor under one, so that the
// host's figures can be read as what the translation must cost (a process, four pipes, two
// framings) and what the host adds.
//
// It runs as the byte relay does (childRelay), a C-style floor rather than a Go one: one thread,
// raw system calls, ppoll, no collector; nothing in its loop allocates once its buffers have
// grown. Unlike the relay it writes a whole message before it reads on (waiting in ppoll while
// the pipe is full): its peers read all the time, so that cannot deadlock here.
func childTranslator(args []string) int {
	if len(args) == 0 {
		return 2
	}
	runtime.LockOSThread()
	cmd, inW, outR, err := startPiped(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sbbench _translate:", err)
		return 1
	}
	defer runtime.KeepAlive(inW) // their descriptors are used raw below: no finalizer may close them
	defer runtime.KeepAlive(outR)
	stop := func(code int) int {
		_ = cmd.Process.Kill() // ignore error: it may have exited
		_ = cmd.Wait()         // ignore error: it was killed
		return code
	}
	// The MCP handshake, before the loop (blocking: nothing else is going on).
	// The host's own initialize (its name, protocol version and capabilities), so that the server
	// behaves as it does behind the host.
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"switchboard","version":"0.1.0"},"capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}}}}` + "\n"); err != nil {
		return stop(1)
	}
	lines := bufio.NewReader(outR)
	for {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			fmt.Fprintln(os.Stderr, "sbbench _translate: the server ended before it answered initialize")
			return stop(1)
		}
		if id, _, _, _ := responseOf(line); string(id) == "0" {
			break
		}
	}
	// The host lists the tools once; the answer is not used (its id is not a number).
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{}}` + "\n"); err != nil {
		return stop(1)
	}
	for _, fd := range []int{0, 1} { // shared with the parent: put back as found
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK == 0 {
			defer unix.SetNonblock(fd, false) // ignore error: best effort, at exit
		}
	}
	toServer, fromServer := int(inW.Fd()), int(outR.Fd())
	for _, fd := range []int{0, 1, toServer, fromServer} {
		if err := unix.SetNonblock(fd, true); err != nil {
			return stop(1)
		}
	}
	t := &translator{toServer: toServer, fromServer: fromServer, toEditor: 1}
	// What the server said after its initialize answer, read ahead by the bufio.Reader.
	ahead, _ := lines.Peek(lines.Buffered()) // ignore error: it is what is buffered
	t.server = append(t.server, ahead...)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20) // a safety net: nothing in the loop should allocate
	if !t.run() {
		return stop(1)
	}
	return stop(0)
}

// translator is childTranslator's loop: what it has read and not yet used from either side, and
// which editor request each tools/call answers.
type translator struct {
	toServer, fromServer, toEditor int
	editor, server                 []byte    // read, not yet used
	out                            []byte    // the message being written
	next                           uint64    // the next tools/call id
	pending                        [256]call // by tools/call id mod 256 (8 callers in flight)
	exit                           bool      // the editor said exit
	textOnce                       bool      // the editor declared experimental.switchboard.textOnce
	content                        []byte    // the content blocks kept for a textOnce editor
	broken                         error     // what ends the loop: a bad frame, a failed write
}

// call is a tools/call in flight: the editor's request id and tool name, as they came.
type call struct{ id, name []byte }

// run reads from both sides until the editor says exit or either side ends. It reports whether it
// ended cleanly (exit, or the editor gone).
func (t *translator) run() bool {
	rbuf := make([]byte, 64<<10)
	fds := [2]unix.PollFd{{Fd: 0, Events: unix.POLLIN}, {Fd: int32(t.fromServer), Events: unix.POLLIN}}
	for {
		t.editorMessages()
		t.serverMessages()
		if t.broken != nil {
			fmt.Fprintln(os.Stderr, "sbbench _translate:", t.broken)
			return false
		}
		if t.exit {
			return true
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		_, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, 0, 0, 0, 0)
		if e != 0 && e != syscall.EINTR {
			return false
		}
		for i, fd := range fds {
			if fd.Revents == 0 {
				continue
			}
			n, e := rawIO(unix.SYS_READ, int(fd.Fd), rbuf)
			switch {
			case e == syscall.EAGAIN || e == syscall.EINTR:
				continue
			case e != 0 || n == 0:
				if i == 1 {
					fmt.Fprintln(os.Stderr, "sbbench _translate: the server's output ended")
				}
				return i == 0 // the editor went away (fine) or the server did (not)
			}
			if i == 0 {
				t.editor = append(t.editor, rbuf[:n]...)
			} else {
				t.server = append(t.server, rbuf[:n]...)
			}
		}
	}
}

// editorMessages handles every whole LSP frame read from the editor, up to exit.
func (t *translator) editorMessages() {
	for !t.exit && t.broken == nil {
		end := bytes.Index(t.editor, []byte("\r\n\r\n"))
		if end < 0 {
			return
		}
		n := -1
		for h, rest := t.editor[:end], true; rest; {
			var line []byte
			line, h, rest = bytes.Cut(h, []byte("\r\n"))
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				n, _ = strconv.Atoi(string(v))
			}
		}
		if n < 0 {
			t.broken = errors.New("an LSP header without Content-Length")
			return
		}
		if len(t.editor) < end+4+n {
			return
		}
		t.editorMessage(t.editor[end+4 : end+4+n])
		t.editor = t.editor[:copy(t.editor, t.editor[end+4+n:])]
	}
}

func (t *translator) editorMessage(body []byte) {
	var id, method, params []byte
	jsonscan.Members(body, func(name, value []byte) bool {
		switch string(name) {
		case "id":
			id = value
		case "method":
			method = value
		case "params":
			params = value
		}
		return true
	})
	switch {
	case id == nil:
		t.exit = string(method) == `"exit"`
		// Other notifications (initialized, $/cancelRequest, ...) need nothing here.
	case string(method) == `"initialize"`:
		// Both shipped editors declare it, and so does sbbench's driver (lsp.go).
		t.textOnce = bytes.Contains(params, []byte(`"textOnce":true`))
		t.reply(id, `{"capabilities":{}}`)
	case string(method) == `"shutdown"`:
		t.reply(id, `null`)
	case string(method) == `"workspace/executeCommand"`:
		var command, arg []byte
		jsonscan.Members(params, func(name, value []byte) bool {
			switch string(name) {
			case "command":
				command = value
			case "arguments":
				jsonscan.Elements(value, func(v []byte) bool { arg = v; return false })
			}
			return true
		})
		switch string(command) {
		case `"switchboard.servers"`:
			t.reply(id, `[{"name":"s","state":"ready","tools":1}]`)
		case `"switchboard.callTool"`:
			t.callTool(id, arg)
		default:
			t.fail(id, "unknown command")
		}
	default:
		t.fail(id, "method not found")
	}
}

// callTool sends the editor's call to the server as tools/call.
func (t *translator) callTool(id, arg []byte) {
	var name, args []byte
	jsonscan.Members(arg, func(k, v []byte) bool {
		switch string(k) {
		case "name":
			name = v
		case "arguments":
			args = v
		}
		return true
	})
	if len(name) < 2 || args == nil {
		t.fail(id, "callTool needs a name and arguments")
		return
	}
	k := t.next
	t.next++
	p := &t.pending[k%uint64(len(t.pending))]
	p.id, p.name = append(p.id[:0], id...), append(p.name[:0], name...)
	t.out = append(t.out[:0], `{"jsonrpc":"2.0","id":`...)
	t.out = strconv.AppendUint(t.out, k, 10)
	t.out = append(t.out, `,"method":"tools/call","params":{"name":"`...)
	t.out = append(t.out, name[bytes.LastIndex(name, []byte("__"))+2:]...) // "mcp__server__tool" (or "tool") -> tool"
	t.out = append(t.out, `,"arguments":`...)
	t.out = append(t.out, args...)
	t.out = append(t.out, "}}\n"...)
	t.write(t.toServer)
}

// serverMessages handles every whole line read from the server.
func (t *translator) serverMessages() {
	for t.broken == nil {
		nl := bytes.IndexByte(t.server, '\n')
		if nl < 0 {
			return
		}
		t.serverMessage(t.server[:nl])
		t.server = t.server[:copy(t.server, t.server[nl+1:])]
	}
}

func (t *translator) serverMessage(line []byte) {
	id, method, result, failed := responseOf(line)
	switch {
	case id == nil:
		return // a notification
	case method != nil: // a request of the server's: roots/list answered as the host does (no folders)
		t.out = append(t.out[:0], `{"jsonrpc":"2.0","id":`...)
		t.out = append(t.out, id...)
		if string(method) == `"roots/list"` {
			t.out = append(t.out, `,"result":{"roots":[]}}`+"\n"...)
		} else {
			t.out = append(t.out, `,"error":{"code":-32601,"message":"not supported"}}`+"\n"...)
		}
		t.write(t.toServer)
		return
	case id[0] < '0' || id[0] > '9':
		return // not a tools/call of ours (tools/list)
	}
	k, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil || (result == nil && !failed) {
		return
	}
	p := &t.pending[k%uint64(len(t.pending))]
	if failed {
		t.fail(p.id, "the server answered with an error")
		return
	}
	var text, content []byte
	isError := false
	jsonscan.Members(result, func(k, v []byte) bool {
		switch string(k) {
		case "isError":
			isError = string(v) == "true"
		case "content":
			content = v
			jsonscan.Elements(v, func(block []byte) bool {
				jsonscan.Members(block, func(k, v []byte) bool {
					if string(k) == "text" {
						text = v
					}
					return true
				})
				return text == nil
			})
		}
		return true
	})
	if text == nil {
		text = noText
	}
	if content == nil {
		content = noContent
	}
	omitted := false
	if t.textOnce {
		// As the host does for such an editor: the text once, in text; other blocks stay.
		t.content = append(t.content[:0], '[')
		jsonscan.Elements(content, func(block []byte) bool {
			text := false
			jsonscan.Members(block, func(k, v []byte) bool {
				text = text || (string(k) == "type" && string(v) == `"text"`)
				return true
			})
			if text {
				omitted = true
				return true
			}
			if len(t.content) > 1 {
				t.content = append(t.content, ',')
			}
			t.content = append(t.content, block...)
			return true
		})
		content = append(t.content, ']')
	}
	// The contract's ToolResult (host/wire/PROTOCOL.md), in the host's order; bytes counts the
	// text as written (escapes and all), which is the same for the echo's text.
	t.out = append(t.out[:0], `{"jsonrpc":"2.0","id":`...)
	t.out = append(t.out, p.id...)
	t.out = append(t.out, `,"result":{"name":`...)
	t.out = append(t.out, p.name...)
	t.out = append(t.out, `,"isError":`...)
	t.out = strconv.AppendBool(t.out, isError)
	t.out = append(t.out, `,"text":`...)
	t.out = append(t.out, text...)
	t.out = append(t.out, `,"content":`...)
	t.out = append(t.out, content...)
	t.out = append(t.out, `,"truncated":false,"bytes":`...)
	t.out = strconv.AppendInt(t.out, int64(len(text)-2), 10)
	if omitted {
		t.out = append(t.out, `,"textOmitted":true`...)
	}
	t.out = append(t.out, "}}"...)
	t.frame()
}

var noText, noContent = []byte(`""`), []byte(`[]`)

// responseOf returns a JSON-RPC message's id, method (requests) and result, or whether it is an
// error response.
func responseOf(line []byte) (id, method, result []byte, failed bool) {
	jsonscan.Members(line, func(k, v []byte) bool {
		switch string(k) {
		case "id":
			id = v
		case "method":
			method = v
		case "result":
			result = v
		case "error":
			failed = true
		}
		return true
	})
	return id, method, result, failed
}

func (t *translator) reply(id []byte, result string) {
	t.out = append(t.out[:0], `{"jsonrpc":"2.0","id":`...)
	t.out = append(t.out, id...)
	t.out = append(t.out, `,"result":`...)
	t.out = append(t.out, result...)
	t.out = append(t.out, '}')
	t.frame()
}

func (t *translator) fail(id []byte, msg string) {
	t.out = append(t.out[:0], `{"jsonrpc":"2.0","id":`...)
	t.out = append(t.out, id...)
	t.out = append(t.out, `,"error":{"code":-32603,"message":"`...)
	t.out = append(t.out, msg...)
	t.out = append(t.out, `"}}`...)
	t.frame()
}

// frame writes t.out to the editor with its Content-Length header.
func (t *translator) frame() {
	var head [48]byte
	h := append(head[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(t.out)), 10)
	h = append(h, "\r\n\r\n"...)
	// One write: the header goes in front of the body (t.out has the room after its first use).
	n := len(h)
	t.out = append(t.out, h...) // grow by n
	copy(t.out[n:], t.out[:len(t.out)-n])
	copy(t.out, h)
	t.write(t.toEditor)
}

// write writes t.out to fd, waiting in ppoll while the pipe is full; a failure (EPIPE: the reader
// is gone) ends the loop.
func (t *translator) write(fd int) {
	for b := t.out; len(b) > 0 && t.broken == nil; {
		n, e := rawIO(unix.SYS_WRITE, fd, b)
		switch e {
		case 0:
			b = b[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			p := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			_, _, _ = unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p[0])), 1, 0, 0, 0, 0)
		default:
			t.broken = fmt.Errorf("write: %w", e)
		}
	}
}
