//go:build linux || darwin

// Command escaper is a stand-in for a malicious MCP server: it tries each action named on its
// command line and prints one JSON line per try, {"action": ..., "ok": ..., "err": ...}. The
// sandbox tests run it confined and check that every escape fails and every allowed action works.
//
// Actions: read:PATH, write:PATH, list:PATH, connect:HOST:PORT, unix:PATH (a Unix socket), umount:PATH, get:URL (through the proxy the
// environment names), exec:PATH (runs /bin/cat PATH), signal:PID (signal 0), and fork, which
// runs the remaining actions in a grandchild that left the session (setsid) after a double fork.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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
	if len(args) > 0 && args[0] == "_middle" {
		// The middle of the double fork: start the grandchild in a new session and leave.
		cmd := exec.Command(os.Args[0], append([]string{"_grand"}, args[1:]...)...)
		cmd.Path = selfPath()
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
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
			cmd := exec.Command(os.Args[0], append([]string{"_middle"}, args[i+1:]...)...)
			cmd.Path = selfPath()
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			err := cmd.Run()
			emit(result{Action: "fork", OK: err == nil, Err: errString(err)})
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
