//go:build !unix

package broker

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// Shared servers need Unix sockets and process groups (design §4.1: Windows is phase 2). The
// package builds everywhere; here every attach fails and the window runs its servers itself.

func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

func newSession(*exec.Cmd) {}

var errUnsupported = errors.New("broker: shared servers are not available on this system")

type child struct {
	stdin, stdout *os.File
	in, out       rawio.Conn
	exited        chan struct{}
}

func startChild(Launch) (*child, error) { return nil, errUnsupported }
func (*child) pid() int                 { return 0 }
func (*child) stop()                    {}
func (*child) stderrTail() string       { return "" }
func (*child) exitReason() string       { return "" }

func rawWrite(uintptr, []byte) (int, error) { return 0, errUnsupported }
