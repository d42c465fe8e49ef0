//go:build unix

package broker

import (
	"bufio"
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestHandshakeCancelledWhilePending: a window's watch (or attach) cancelled just after the
// daemon's pending reply ends at once. The cancellation set the socket's deadline to now, and
// the pending reply then cleared it: the watch waited for the daemon for good, and the window's
// host, closing its servers, never exited when its editor closed it (TestSharedHostileTextEscaped
// failed so in a CI run: the second window was closed as its watch of the crashed server began).
// The fake daemon here cancels right as it writes the pending reply, in many rounds, so
// that the cancellation lands on each side of the client's clearing of the deadline.
func TestHandshakeCancelledWhilePending(t *testing.T) {
	dir := testDir(t)
	ln, err := net.Listen("unix", PathsIn(dir).Sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cancels := make(chan context.CancelFunc)
	go func() {
		for cancel := range cancels {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
				c.Write([]byte(`{"broker":1,"pending":true}` + "\n")) // ignore error: the window may be gone
				cancel()
			}
			defer c.Close() // held open: the daemon never says more
		}
	}()
	defer close(cancels)
	for round := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Watch(ctx, Config{Dir: dir, Build: "test"}, request(launch())) }()
		cancels <- cancel
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("round %d: Watch after its cancellation = %v, want context.Canceled", round, err)
			}
		case <-time.After(30 * time.Second): // a hang fails the test instead of its binary
			t.Fatalf("round %d: Watch cancelled after the pending reply did not return", round)
		}
	}
}
