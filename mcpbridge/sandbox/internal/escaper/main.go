//go:build linux || darwin

// Command escaper is a stand-in for a malicious MCP server: it tries each action named on its
// command line and prints one JSON line per try, {"action": ..., "ok": ..., "err": ...}. The
// sandbox tests run it confined and check that every escape fails and every allowed action works.
//
// Actions: read:PATH, write:PATH, rename:FROM=TO, link:FROM=TO (a hard link), remove:PATH, list:PATH, connect:HOST:PORT, unix:PATH (a Unix socket; @NAME for an abstract one), fd:N (reads
// an inherited descriptor), umount:PATH, get:URL (through the proxy the
// environment names), exec:PATH (runs /bin/cat PATH), signal:PID (signal 0), procscan:NEEDLE
// (succeeds when a visible process has the argument NEEDLE; the body lists every visible
// process as "pid argv0"), spawn:MARKER (leaves a setsid grandchild "escaper _linger MARKER" running;
// the body is its pid as the escaper sees it), orphan (a double-forked grandchild that exits at
// once; succeeds when someone reaps it), wait (blocks until stdin closes), and fork, which runs the
// remaining actions in a grandchild that left the session (setsid) after a double fork, and waits
// for it to end.
//
// "escaper _hold ARGS..." does nothing but wait for stdin to close: a process whose command line
// holds a secret. "escaper _linger ARGS..." waits an hour, whatever happens to its stdin: a
// grandchild left behind, which only a kill ends.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type result struct {
	Action string `json:"action"`
	OK     bool   `json:"ok"`
	Err    string `json:"err,omitempty"`
	Body   string `json:"body,omitempty"`
}

func main() {
	args := os.Args[1:]
	prefix := ""
	if len(args) > 0 && args[0] == "_exit" {
		os.Exit(0)
	}
	if len(args) > 0 && args[0] == "_linger" {
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	if len(args) > 0 && args[0] == "_hold" {
		io.Copy(io.Discard, os.Stdin) // ignore error: any end of stdin ends the hold
		os.Exit(0)
	}
	if len(args) > 0 && args[0] == "_spawn" {
		// The middle of spawn's or orphan's double fork: start the grandchild in a new session,
		// print its pid and leave.
		cmd := exec.Command(os.Args[0], args[1:]...)
		cmd.Path = selfPath()
		cmd.Stdin = os.Stdin
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
	if len(args) > 0 && args[0] == "_middle" {
		// The middle of the double fork: start the grandchild in a new session and leave. The
		// grandchild holds fork's done pipe (descriptor 3) until it ends.
		cmd := exec.Command(os.Args[0], append([]string{"_grand"}, args[1:]...)...)
		cmd.Path = selfPath()
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.ExtraFiles = []*os.File{os.NewFile(3, "done")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			emit(result{Action: "fork", Err: err.Error()})
		}
		os.Exit(0)
	}
	if len(args) > 0 && args[0] == "_grand" {
		args, prefix = args[1:], "grandchild "
		if os.Getpid() != mustSid() {
			emit(result{Action: prefix + "setsid", Err: "not a session leader"})
		}
	}
	for i, a := range args {
		if a == "fork" {
			// Wait for the grandchild to end (its end of the done pipe closes): the sandbox ends
			// what is left in it when the server exits, and the grandchild's tries would be lost.
			done, hold, err := os.Pipe()
			if err != nil {
				emit(result{Action: "fork", Err: err.Error()})
				return
			}
			cmd := exec.Command(os.Args[0], append([]string{"_middle"}, args[i+1:]...)...)
			cmd.Path = selfPath()
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			cmd.ExtraFiles = []*os.File{hold}
			err = cmd.Run()
			hold.Close() // ignore error: our copy; the grandchild has its own
			emit(result{Action: "fork", OK: err == nil, Err: errString(err)})
			io.Copy(io.Discard, done) // ignore error: EOF once the grandchild ends
			return
		}
		r := try(a)
		r.Action = prefix + a
		emit(r)
	}
}

func selfPath() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}

func mustSid() int {
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	return int(sid)
}

func try(a string) result {
	verb, arg, _ := strings.Cut(a, ":")
	switch verb {
	case "read":
		b, err := os.ReadFile(arg)
		return result{OK: err == nil, Err: errString(err), Body: string(b)}
	case "write":
		err := os.WriteFile(arg, []byte("escaper was here\n"), 0o644)
		return result{OK: err == nil, Err: errString(err)}
	case "rename":
		from, to, _ := strings.Cut(arg, "=")
		err := os.Rename(from, to)
		return result{OK: err == nil, Err: errString(err)}
	case "link":
		from, to, _ := strings.Cut(arg, "=")
		err := os.Link(from, to)
		return result{OK: err == nil, Err: errString(err)}
	case "remove":
		err := os.Remove(arg)
		return result{OK: err == nil, Err: errString(err)}
	case "list":
		_, err := os.ReadDir(arg)
		return result{OK: err == nil, Err: errString(err)}
	case "connect":
		c, err := net.DialTimeout("tcp", arg, 3*time.Second)
		if err == nil {
			c.Close()
		}
		return result{OK: err == nil, Err: errString(err)}
	case "unix":
		c, err := net.DialTimeout("unix", arg, 3*time.Second)
		if err == nil {
			c.Close()
		}
		return result{OK: err == nil, Err: errString(err)}
	case "fd":
		// A file the host left open without close-on-exec: read it through the descriptor, which
		// no path check sees.
		n, err := strconv.Atoi(arg)
		if err != nil {
			return result{Err: err.Error()}
		}
		buf := make([]byte, 4096)
		k, err := syscall.Pread(n, buf, 0)
		if err != nil {
			return result{Err: err.Error()}
		}
		return result{OK: true, Body: string(buf[:k])}
	case "umount":
		err := unmount(arg)
		return result{OK: err == nil, Err: errString(err)}
	case "get":
		client := &http.Client{Timeout: 10 * time.Second}
		resp, err := client.Get(arg)
		if err != nil {
			return result{Err: err.Error()}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return result{Err: resp.Status}
		}
		return result{OK: true, Body: string(b)}
	case "exec":
		out, err := exec.Command("/bin/cat", arg).CombinedOutput()
		return result{OK: err == nil, Err: errString(err), Body: string(out)}
	case "procscan":
		return procscan(arg)
	case "spawn":
		pid, err := doubleFork("_linger", arg)
		return result{OK: err == nil, Err: errString(err), Body: strconv.Itoa(pid)}
	case "orphan":
		pid, err := doubleFork("_exit")
		if err != nil {
			return result{Err: err.Error()}
		}
		return reaped(pid)
	case "wait":
		_, err := io.Copy(io.Discard, os.Stdin)
		return result{OK: err == nil, Err: errString(err)}
	case "signal":
		pid, _ := strconv.Atoi(arg)
		err := syscall.Kill(pid, 0)
		return result{OK: err == nil, Err: errString(err)}
	}
	return result{Err: "unknown action"}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func emit(r result) {
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

// procscan reads every visible process's command line, as a server hunting for another's token
// would.
func procscan(needle string) result {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return result{Err: err.Error()}
	}
	var r result
	var seen []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			// Gone; or a kernel thread, or a zombie (the escaper's own fork's middle process, not
			// yet reaped): no command line to read, so no secret in it.
			continue
		}
		argv0, _, _ := strings.Cut(string(b), "\x00")
		seen = append(seen, e.Name()+" "+argv0)
		if slices.Contains(strings.Split(string(b), "\x00"), needle) {
			r.OK = true
		}
	}
	r.Body = strings.Join(seen, "\n")
	if !r.OK {
		r.Err = "not found"
	}
	return r
}

// doubleFork starts "escaper args..." as a setsid grandchild through a middle process that exits
// at once, so the grandchild is an orphan; it returns the grandchild's pid.
func doubleFork(args ...string) (int, error) {
	cmd := exec.Command(os.Args[0], append([]string{"_spawn"}, args...)...)
	cmd.Path = selfPath()
	cmd.Stdin = os.Stdin
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// reaped waits until process pid is gone from /proc: an orphan that exited stays there as a
// zombie until whoever adopted it reaps it.
func reaped(pid int) result {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			return result{OK: true}
		}
		time.Sleep(5 * time.Millisecond) // running still (about to exit) or a zombie not yet reaped
	}
	return result{Err: "orphan " + strconv.Itoa(pid) + " was never reaped"}
}
