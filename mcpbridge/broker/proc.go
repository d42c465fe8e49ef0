//go:build unix

package broker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// The daemon tags its children as the stdio transport tags its own (stdio.OwnerEnv), so the
// owner-tag sweep a window or a new daemon runs at start (stdio.SweepOrphans) finds what a killed
// daemon left behind. (mcpbridge/stdio's start is an MCP transport; the daemon needs the raw
// pipes, so it starts its children here.)

// Grace periods of a child's stop: stdin closed, then SIGTERM to the group, then SIGKILL.
var (
	stdinGrace = 300 * time.Millisecond
	termGrace  = 2 * time.Second
)

// child is one server process in its own process group.
type child struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	// in and out are stdin and stdout as the relay writes and reads them: raw system calls where
	// rawio takes the pipes, so that a frame does not wake the runtime's monitor thread (the
	// window's own stdio transport does the same).
	in, out rawio.Conn
	stderr  *ring
	// outFD is stdout's read end as a bare descriptor when the relay loop reads it (stdout and
	// out are nil then), until the loop takes it (outRd); -1 otherwise.
	outFD int
	outRd *reader

	exited  chan struct{} // closed once Wait returned
	waitErr error         // set before exited is closed
	errDone chan struct{} // stderr reached EOF

	stopOnce sync.Once
}

func startChild(l Launch) (*child, error) {
	cmd := exec.Command(l.Command, l.Args...)
	cmd.Args[0] = l.Command
	// "broker-N": never equal to a tag the registry gives its own children in the same process
	// (a window that runs a daemon in-process, as tests do), whose Close kills by exact tag.
	cmd.Env = append(append([]string{}, l.Env...), stdio.OwnerEnv("broker-"))
	cmd.Dir = l.Dir
	if cmd.Dir == "" {
		cmd.Dir = "/" // never the daemon's own cwd: it is the first starter's
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// stdout's read end is the relay loop's where there is one: never in the runtime's poller,
	// which would wake for every frame too (loop_linux.go).
	var (
		outR, outW *os.File
		outFD      = -1
	)
	if loop() != nil {
		r, w, err := rawPipe(false)
		if err != nil {
			closeAll(inR, inW)
			return nil, err
		}
		outFD, outW = r, os.NewFile(uintptr(w), "|1")
	} else if outR, outW, err = os.Pipe(); err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	closeOut := func() {
		if outR != nil {
			outR.Close() // ignore error: ours
		} else {
			syscall.Close(outFD) // ignore error: ours
		}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeOut()
		closeAll(inR, inW, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = spawn(cmd) // with a parent-death signal where there is one (proc_linux.go)
	closeAll(inR, outW, errW)
	if err != nil {
		closeOut()
		closeAll(inW, errR)
		return nil, fmt.Errorf("start %s: %w", l.Command, err)
	}
	c := &child{cmd: cmd, stdin: inW, stdout: outR, in: rawio.Or(inW), outFD: outFD, stderr: newRing(64 << 10),
		exited: make(chan struct{}), errDone: make(chan struct{})}
	if outR != nil {
		c.out = rawio.Or(outR)
	}
	go func() {
		defer close(c.errDone)
		_, _ = io.Copy(c.stderr, errR) // ignore error: ends with the child
		errR.Close()
	}()
	go func() {
		c.waitErr = cmd.Wait()
		// The leader is gone; what it left in its group (npx's node) goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ignore error: the group may be empty
		close(c.exited)
	}()
	return c, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close() // ignore error: our pipe ends
	}
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop ends the child as the registry does: stdin closed (a polite server exits), then SIGTERM
// and SIGKILL to its whole process group. It returns once the child has exited.
func (c *child) stop() {
	c.stopOnce.Do(func() {
		c.stdin.Close() // ignore error: our pipe end
		select {
		case <-c.exited:
		case <-time.After(stdinGrace):
			c.signal(syscall.SIGTERM)
			select {
			case <-c.exited:
			case <-time.After(termGrace):
				c.signal(syscall.SIGKILL)
			}
		}
	})
	<-c.exited
	// stdout may be held open by what the server left behind: its reader ends now.
	if c.stdout != nil {
		c.stdout.Close() // ignore error: our pipe end
	} else {
		loop().drop(c.outRd)
	}
}

// signal sends sig to the child's process group, and to the child itself when it moved out of
// that group (stdio.SignalGroup): stop waits for its exit, and a child that left its group and
// ignored the end of its stdin was never signalled, so the daemon never ended it.
func (c *child) signal(sig syscall.Signal) {
	_ = stdio.SignalGroup(c.cmd.Process, sig) // ignore error: gone already
}

// stderrTail is the end of what the child wrote to stderr; after its exit it first lets the
// last lines arrive (briefly: a grandchild may hold the pipe open).
func (c *child) stderrTail() string {
	select {
	case <-c.exited:
		select {
		case <-c.errDone:
		case <-time.After(200 * time.Millisecond):
		}
	default:
	}
	return c.stderr.tail(2 << 10)
}

// exitReason says how the child ended, for people.
func (c *child) exitReason() string {
	var ee *exec.ExitError
	if errors.As(c.waitErr, &ee) {
		return "the server exited (" + ee.ProcessState.String() + ")"
	}
	if c.waitErr != nil {
		return "the server exited: " + c.waitErr.Error()
	}
	return "the server exited"
}

// ring keeps the last n bytes written to it.
type ring struct {
	mu  sync.Mutex
	buf []byte
	n   int
}

func newRing(n int) *ring { return &ring{n: n} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.n {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.n:]...)
	}
	return len(p), nil
}

func (r *ring) tail(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
