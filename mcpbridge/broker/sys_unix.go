//go:build unix

package broker

import (
	"io/fs"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

func newSession(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

func rawWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }

// pipesSupported: the attachment's frames may move to a pair of pipes passed over the socket.
const pipesSupported = true

// newPipes makes the two pipes of one attachment: up carries the window's frames to the daemon,
// down the daemon's to the window. Every end is close-on-exec, so no server child inherits one.
// The daemon's end of up is a bare descriptor when the relay loop reads it (never in the
// runtime's poller, which would wake for every frame too), else nil and upR is a polled file.
func newPipes() (upFD int, upR, upW, downR, downW *os.File, err error) {
	upFD = -1
	if loop() != nil {
		r, w, err := rawPipe(true) // the window polls its end
		if err != nil {
			return -1, nil, nil, nil, nil, err
		}
		upFD, upW = r, os.NewFile(uintptr(w), "broker-up")
	} else if upR, upW, err = os.Pipe(); err != nil { // polled, for the goroutine that reads it
		return -1, nil, nil, nil, nil, err
	}
	if downR, downW, err = os.Pipe(); err != nil {
		if upFD >= 0 {
			syscall.Close(upFD) // ignore error: ours, unused
		} else {
			upR.Close() // ignore error: ours, unused
		}
		upW.Close() // ignore error: ours, unused
		return -1, nil, nil, nil, nil, err
	}
	return upFD, upR, upW, downR, downW, nil
}

// writeWithFiles writes line on c with fs' descriptors attached (SCM_RIGHTS), all in one
// message, so that the descriptors arrive with the line that announces them.
func writeWithFiles(c *net.UnixConn, line []byte, fs ...*os.File) error {
	// Not f.Fd(): it would put the pipe in blocking mode, for the window too (the mode belongs
	// to the open file, which the window shares), and the window could then neither poll it
	// nor end a read in progress by closing it.
	fds := make([]int, len(fs))
	for i, f := range fs {
		rc, err := f.SyscallConn()
		if err != nil {
			return err
		}
		if err := rc.Control(func(fd uintptr) { fds[i] = int(fd) }); err != nil {
			return err
		}
	}
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second)) // ignore error: a socket takes deadlines
	defer c.SetWriteDeadline(time.Time{})                    // ignore error: as above
	n, _, err := c.WriteMsgUnix(line, syscall.UnixRights(fds...), nil)
	for _, f := range fs {
		runtime.KeepAlive(f) // the descriptor must stay open until the message is sent
	}
	if err == nil && n < len(line) {
		_, err = c.Write(line[n:])
	}
	return err
}

// fdReader reads a socket keeping any descriptors that arrive with the bytes (close-on-exec:
// the net package receives them so).
type fdReader struct {
	c   *net.UnixConn
	fds []int
	oob []byte
}

func (r *fdReader) Read(p []byte) (int, error) {
	if r.oob == nil {
		r.oob = make([]byte, syscall.CmsgSpace(4*4))
	}
	n, oobn, _, _, err := r.c.ReadMsgUnix(p, r.oob)
	n, oobn = max(n, 0), max(oobn, 0) // -1 with some errors
	if oobn > 0 {
		msgs, perr := syscall.ParseSocketControlMessage(r.oob[:oobn])
		if perr == nil {
			for _, m := range msgs {
				if fds, err := syscall.ParseUnixRights(&m); err == nil {
					r.fds = append(r.fds, fds...)
				}
			}
		}
	}
	return n, err
}

// closeFDs closes descriptors nobody will use.
func closeFDs(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd) // ignore error: unused
	}
}

func closeFD(fd int) { syscall.Close(fd) } // ignore error: ours

// closeInheritedOnExec marks every descriptor above stderr close-on-exec. The daemon's own are
// already; what it inherited from the window that started it (a pipe its editor left it without
// close-on-exec) is not, and every server the daemon starts, for any window, would hold it.
func closeInheritedOnExec() {
	fds, err := os.ReadDir("/dev/fd") // Linux: /proc/self/fd
	if err != nil {
		return // nothing to list them by: as before
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd) // the listing's own descriptor is closed by now: EBADF, no harm
		}
	}
}

// processMissing: no process pid exists.
func processMissing(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }
