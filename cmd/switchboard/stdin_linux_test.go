package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
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
			cmd, stderr := selfChild("TestPollableStdin", "SWITCHBOARD_TEST_POLLABLE_STDIN=1")
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

// serve polls a stdout of its own and writes it with raw system calls (rawio); a stdout that is
// a file, or one open file with stderr (whose log lines would meet EAGAIN), is left as it is.
// Either way every byte arrives, even when the reader lags far behind (4 MiB through a 64 KiB
// pipe), and stdout is blocking again afterwards.
func TestPollableStdout(t *testing.T) {
	if os.Getenv("SWITCHBOARD_TEST_POLLABLE_STDOUT") == "1" {
		out, restore := pollableStdout(os.Stdout)
		var w io.Writer = out
		rf, polled := rawio.New(out)
		if polled {
			w = rf
		}
		_, werr := w.Write(make([]byte, 4<<20))
		restore()
		fmt.Fprintf(os.Stderr, "polled=%v nonblocking-after=%v stdout-error=%v\n", polled, nonblocking(1), werr)
		os.Exit(0)
	}
	file := filepath.Join(t.TempDir(), "output")
	for _, c := range []struct {
		name   string
		polled bool
		setup  func(t *testing.T, cmd *exec.Cmd) (written func() int64)
	}{
		{"pipe", true, func(t *testing.T, cmd *exec.Cmd) func() int64 {
			var w tailWriter
			cmd.Stdout = &w // exec gives the child a pipe and copies from it
			return func() int64 { return w.n }
		}},
		{"file", false, func(t *testing.T, cmd *exec.Cmd) func() int64 {
			f, err := os.Create(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			cmd.Stdout = f
			return func() int64 {
				fi, err := os.Stat(file)
				if err != nil {
					t.Fatal(err)
				}
				return fi.Size()
			}
		}},
		{"pipe shared with stderr", false, func(t *testing.T, cmd *exec.Cmd) func() int64 {
			var w tailWriter
			cmd.Stdout, cmd.Stderr = &w, &w // one pipe for both: the report ends the data
			return func() int64 { return w.n }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, stderr := selfChild("TestPollableStdout", "SWITCHBOARD_TEST_POLLABLE_STDOUT=1")
			written := c.setup(t, cmd)
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			report := fmt.Sprintf("polled=%v nonblocking-after=false stdout-error=<nil>", c.polled)
			n, got := written(), stderr.String()
			if w, shared := cmd.Stderr.(*tailWriter); shared { // the report is the end of stdout
				n -= int64(len(report) + 1)
				got = string(w.tail)
			}
			if !strings.Contains(got, report) {
				t.Errorf("stdout to a %s: %q, want %q", c.name, got, report)
			}
			if n != 4<<20 {
				t.Errorf("stdout to a %s: %d bytes arrived, want %d", c.name, n, 4<<20)
			}
		})
	}
}

// tailWriter counts what is written to it and keeps the last 256 bytes.
type tailWriter struct {
	n    int64
	tail []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.tail = append(w.tail, p...)
	if len(w.tail) > 256 {
		w.tail = append([]byte(nil), w.tail[len(w.tail)-256:]...)
	}
	return len(p), nil
}

// A stdout that stays an os.File: when its reader goes away, the host still exits 1 instead of
// dying of SIGPIPE (os.File raises it for fd 1 unless SIGPIPE is notified). One pipe for stdout
// and stderr (`2>&1`) is always left an os.File (pollableStdout); a FIFO is where the kernel
// refuses RWF_NOWAIT (this one does).
func TestServeStdoutSharedWithStderrClosed(t *testing.T) {
	bin, _ := e2eBuild(t)
	stdoutClosed(t, bin, func(cmd *exec.Cmd) io.ReadCloser {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = w, w
		t.Cleanup(func() { w.Close() })
		return r
	})
}

func TestServeStdoutFIFOClosed(t *testing.T) {
	bin, _ := e2eBuild(t)
	fifo := filepath.Join(t.TempDir(), "stdout")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	stdoutClosed(t, bin, func(cmd *exec.Cmd) io.ReadCloser {
		r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // does not wait for a writer
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = w
		t.Cleanup(func() { w.Close() })
		return r
	})
}

// pollableStdout asks which descriptor a file is without os.File.Fd, which would put it in
// blocking mode: a stdout someone else made non-blocking stays so when the host leaves it alone.
func TestFdOfKeepsTheMode(t *testing.T) {
	r, w, err := os.Pipe() // non-blocking, polled
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(d uintptr) { fd = int(d) })
	if got := fdOf(w); got != fd {
		t.Fatalf("fdOf = %d, want %d", got, fd)
	}
	if !nonblocking(fd) {
		t.Error("fdOf put the descriptor in blocking mode")
	}
}

// selfChild is this test binary run again for test alone, with env added (the child's side of a
// test that needs its own stdin or stdout); stderr collects what the child reports.
func selfChild(test, env string) (cmd *exec.Cmd, stderr *strings.Builder) {
	cmd = exec.Command(os.Args[0], "-test.run", "^"+test+"$", "-test.short")
	cmd.Env = append(os.Environ(), env)
	stderr = new(strings.Builder)
	cmd.Stderr = stderr
	return cmd, stderr
}
