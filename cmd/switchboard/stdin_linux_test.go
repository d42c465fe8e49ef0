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

// serve's stdin is read with deadlines when it is a pipe (how editors start it); it is left alone
// when it is a file, or one socket for both stdin and stdout (socat's EXEC:, inetd): non-blocking
// mode there would reach stdout, whose writes would then fail once the socket is full instead of
// waiting. In every case stdin is back in its mode once serve is done with it.
func TestPollableStdin(t *testing.T) {
	if os.Getenv("SWITCHBOARD_TEST_POLLABLE_STDIN") == "1" {
		in, restore := pollableStdin()
		deadlines := in.SetReadDeadline(time.Time{}) == nil
		// More than a socket's buffer on stdout, while nobody reads it yet: a blocking stdout
		// waits, a non-blocking one fails.
		_, werr := os.Stdout.Write(make([]byte, 4<<20))
		restore()
		fmt.Fprintf(os.Stderr, "deadlines=%v nonblocking-after=%v stdout-error=%v\n", deadlines, nonblocking(0), werr)
		os.Exit(0)
	}
	file := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		deadlines bool
		setup     func(t *testing.T, cmd *exec.Cmd) (drain func())
	}{
		{"pipe", true, func(t *testing.T, cmd *exec.Cmd) func() {
			cmd.Stdin = strings.NewReader("") // exec gives the child a pipe for a reader
			cmd.Stdout = new(strings.Builder)
			return func() {}
		}},
		{"file", false, func(t *testing.T, cmd *exec.Cmd) func() {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			cmd.Stdin = f
			cmd.Stdout = new(strings.Builder)
			return func() {}
		}},
		{"socket shared with stdout", false, func(t *testing.T, cmd *exec.Cmd) func() {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			child, parent := os.NewFile(uintptr(fds[0]), "child"), os.NewFile(uintptr(fds[1]), "parent")
			t.Cleanup(func() { child.Close(); parent.Close() })
			cmd.Stdin, cmd.Stdout = child, child
			return func() { // read what the child writes, once it has had time to fill the buffer
				child.Close()
				buf := make([]byte, 64<<10)
				for {
					if _, err := parent.Read(buf); err != nil {
						return
					}
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestPollableStdin$", "-test.short")
			cmd.Env = append(os.Environ(), "SWITCHBOARD_TEST_POLLABLE_STDIN=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			drain := c.setup(t, cmd)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			drain()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			want := fmt.Sprintf("deadlines=%v nonblocking-after=false stdout-error=<nil>", c.deadlines)
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stdin from a %s: %q, want %q", c.name, stderr.String(), want)
			}
		})
	}
}
