//go:build !unix

package broker

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// Shared servers need Unix sockets and process groups (design §4.1: Windows is phase 2). The
// package builds everywhere; here every attach fails and the window runs its servers itself.

func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

func newSession(*exec.Cmd) {}

func closeInheritedOnExec() {}

var errUnsupported = errors.New("broker: shared servers are not available on this system")

type child struct {
	stdin, stdout *os.File
	in, out       rawio.Conn
	outFD         int
	outRd         *reader
	exited        chan struct{}
}

func startChild(Launch) (*child, error) { return nil, errUnsupported }
func (*child) pid() int                 { return 0 }
func (*child) stop()                    {}
func (*child) stderrTail() string       { return "" }
func (*child) exitReason() string       { return "" }

func rawWrite(uintptr, []byte) (int, error) { return 0, errUnsupported }

const pipesSupported = false

func newPipes() (upFD int, upR, upW, downR, downW *os.File, err error) {
	return -1, nil, nil, nil, nil, errUnsupported
}

func writeWithFiles(*net.UnixConn, []byte, ...*os.File) error { return errUnsupported }

type fdReader struct {
	c   *net.UnixConn
	fds []int
}

func (r *fdReader) Read(p []byte) (int, error) { return r.c.Read(p) }

func closeFDs([]int) {}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close() // ignore error: our files
	}
}

func closeFD(int) {}

// processMissing: never sure here.
func processMissing(int) bool { return false }
