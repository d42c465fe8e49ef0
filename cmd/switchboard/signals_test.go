package main

import (
	"testing"
	"testing/synctest"
	"time"
)

// memConn is an editor's end that keeps what is written to it (and gives what the test put in).
type memConn struct{ lockedBuffer }

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Read(p)
}
func (c *memConn) Close() error                     { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// Nothing reaches the editor or the log before SIGPIPE is notified (notifySignals runs beside the
// host's start): a write to a reader that is gone must fail with EPIPE, not kill the host. Nor is
// anything read from the editor (its initialize starts the servers) before SIGTERM ends the host
// cleanly.
func TestWritesWaitForSignals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set := make(chan struct{})
		in, out, log := &memConn{}, &memConn{}, &memConn{}
		in.buf.WriteString("message")
		s := &stdio{in: in, out: out, left: make(chan struct{}), signalsSet: set}
		read := make(chan string, 1)
		go func() {
			b := make([]byte, 16)
			n, _ := s.Read(b)
			read <- string(b[:n])
		}()
		go s.Write([]byte("frame"))
		go afterSignals{log, set}.Write([]byte("line"))
		synctest.Wait()
		if got := out.String() + log.String(); got != "" {
			t.Fatalf("written before the signals were set: %q", got)
		}
		select {
		case got := <-read:
			t.Fatalf("read %q before the signals were set", got)
		default:
		}
		close(set)
		synctest.Wait()
		if out.String() != "frame" || log.String() != "line" {
			t.Errorf("after the signals were set: editor %q, log %q", out.String(), log.String())
		}
		if got := <-read; got != "message" {
			t.Errorf("read %q after the signals were set, want message", got)
		}
	})
}
