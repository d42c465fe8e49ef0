//go:build linux

package lspconn

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"golang.org/x/sys/unix"
)

// pipeConn is a connection whose output is a real pipe that nobody reads, and whose Leave moves
// the pipe's write deadline to the past (as cmd/switchboard's stdio does).
type pipeConn struct {
	io.Reader
	w *os.File
}

func (c pipeConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c pipeConn) Close() error                { return nil }
func (c pipeConn) Leave() error                { return c.w.SetWriteDeadline(time.Unix(1, 0)) }

// A write waiting for a peer that stopped reading (its pipe full) ends when the host leaves, and
// so do the writes queued behind it and every later one: the host's close does not wait for an
// editor that is gone (cmd/switchboard TestExitEditorStoppedReading).
func TestStreamLeaveEndsWaitingWrites(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := NewStream(pipeConn{bytes.NewReader(nil), w}, StreamOptions{})
	big := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), jsonrpc2.RawMessage(`"`+strings.Repeat("x", 1<<20)+`"`), nil)
	small := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(2), jsonrpc2.RawMessage(`"ok"`), nil)
	errs := make(chan error, 2)
	go func() { _, err := s.Write(t.Context(), big); errs <- err }() // more than a pipe holds: it waits
	// The big write is waiting once the pipe is full.
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	full := func() bool {
		var size, held int
		rc.Control(func(fd uintptr) { // ignore error: a pipe
			size, _ = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
			held, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		})
		return size > 0 && held == size
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !full() {
		select {
		case err := <-errs:
			t.Fatalf("a write to a pipe nobody reads returned before Leave: %v", err)
		case <-tick.C:
		}
	}
	go func() { _, err := s.Write(t.Context(), small); errs <- err }() // queued behind the big one
	s.Leave()
	hang := time.After(time.Minute) // a hang guard, not a timing assertion
	for range 2 {
		select {
		case err := <-errs:
			if err == nil {
				t.Error("a write that waited for the peer succeeded after Leave")
			}
		case <-hang:
			t.Fatal("a write waiting for a peer that stopped reading did not end at Leave")
		}
	}
	if _, err := s.Write(t.Context(), small); err == nil {
		t.Error("a write after Leave succeeded")
	}
}
