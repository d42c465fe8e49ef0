package stdio

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// idleStream is a Stream to a shared server that says nothing.
type idleStream struct {
	io.Reader
	io.WriteCloser
}

func (idleStream) SetWriteDeadline(time.Time) error { return nil }
func (idleStream) ServerPid() int                   { return 42 }
func (idleStream) ExitInfo() (string, string)       { return "", "" }

// A start that outlives the registry's start-up timeout (a shared server's daemon slow to
// answer) goes on in the background while the registry reports the failure: what it asks the
// transport then (StderrTail, Pid) must not race with the start setting up the connection
// (TestSharedCrash failed once under -race: StderrTail read the stream Start was writing).
func TestAskedWhileStarting(t *testing.T) {
	tr := NewTransport("/bin/false", nil, nil, "", DefaultMaxFrame, slog.New(slog.DiscardHandler))
	entered, release := make(chan struct{}), make(chan struct{})
	r, w := io.Pipe()
	defer w.Close()
	tr.Shared(func(ctx context.Context) (Stream, error) {
		close(entered)
		<-release
		return idleStream{Reader: r, WriteCloser: w}, nil
	})
	started := make(chan error, 1)
	go func() { started <- tr.Start(context.Background()) }()
	<-entered
	if tail := tr.StderrTail(); tail != "" {
		t.Errorf("StderrTail while starting = %q, want nothing", tail)
	}
	close(release)
	// Ask until the start shows, without waiting for Start to return: the registry does not.
	for tr.Pid() != 42 {
		_ = tr.StderrTail()
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	_ = tr.Close()
}
