//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve's stdin is read with deadlines when it is a pipe (how editors start it), is left alone
// when it is a file or a terminal, and is back in blocking mode once serve is done with it.
func TestPollableStdin(t *testing.T) {
	if os.Getenv("SWITCHBOARD_TEST_POLLABLE_STDIN") == "1" {
		in, restore := pollableStdin()
		deadlines := in.SetReadDeadline(time.Time{}) == nil
		restore()
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 0, syscall.F_GETFL, 0)
		fmt.Printf("deadlines=%v nonblocking-after=%v (%v)\n", deadlines, flags&syscall.O_NONBLOCK != 0, errno)
		os.Exit(0)
	}
	file := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		name      string
		stdin     any
		deadlines bool
	}{
		{"pipe", strings.NewReader(""), true}, // exec gives the child a pipe for a reader
		{"file", f, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestPollableStdin$")
			cmd.Env = append(os.Environ(), "SWITCHBOARD_TEST_POLLABLE_STDIN=1")
			switch in := c.stdin.(type) {
			case *os.File:
				cmd.Stdin = in
			case *strings.Reader:
				cmd.Stdin = in
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			want := fmt.Sprintf("deadlines=%v nonblocking-after=false", c.deadlines)
			if !strings.Contains(string(out), want) {
				t.Errorf("stdin from a %s: %q, want %q", c.name, out, want)
			}
		})
	}
}
