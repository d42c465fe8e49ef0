//go:build linux

package main

// The host always exits when its editor goes away (issue 35, hardening): whatever a server, the
// daemon or the editor itself does or fails to do, closing the editor's end ends the host, and
// nothing the host started is left running. Each test makes one peer misbehave the way an
// attacker or bad luck would, then closes stdin; waitExit fails (with the host's goroutines) when
// the host does not exit within the fault bound.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// fPgrp is the process group of pid, from /proc (0 when unreadable).
func fPgrp(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(f[2]) // state ppid pgrp
	return n
}

// A server that moves out of the process group the host made for it, into the host's own, and
// ignores both the end of its stdin and SIGTERM: the host signalled only the group, which no
// longer holds the server, and then waited for the server's exit for good.
func TestExitServerLeftItsGroup(t *testing.T) {
	e := startFaultHost(t, fHostOpts{servers: map[string]fServer{
		"sly": fMcptest("--name", "sly", "--leave-group", "--linger"),
	}})
	e.waitServers("sly ready", fStateIs("sly", "ready"))
	pid := e.pidOf("sly")
	if g := fPgrp(pid); g == pid || g == 0 {
		t.Fatalf("the server did not leave its process group (pgrp %d, pid %d)", g, pid)
	}
	e.stdin.Close() // the editor goes away
	e.waitExit("the editor closed stdin")
	if fProcessAlive(pid) {
		t.Errorf("the server (pid %d) outlived the host", pid)
	}
}
