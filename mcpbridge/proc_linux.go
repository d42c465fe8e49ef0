package mcpbridge

import (
	"os"
	"strconv"
	"strings"
)

// groupAlive reports whether group pgid has a member that is not a zombie. Killed orphans stay
// zombies until init reaps them, which can take a while; they hold nothing and run nothing.
func groupAlive(pgid int) bool {
	if !groupAliveByKill(pgid) {
		return false
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
