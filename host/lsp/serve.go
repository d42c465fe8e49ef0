package lsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// Options configures Serve: the application's options and the connection's own.
type Options struct {
	host.Options // Logger also receives the connection's log; warnings and errors also reach the editor as window/logMessage
	// Version is reported in serverInfo.
	Version string
	// Tap, when set, sees every LSP frame body read or written (tests print it on failure).
	Tap func(dir string, body []byte)
}

// ErrNoShutdown is returned by Serve when the editor sent exit without shutdown first: the
// process should exit with code 1 (LSP "exit" notification).
var ErrNoShutdown = errors.New("lsp: exit without shutdown")

// ErrDisconnected is returned by Serve when the editor's input ended (stdin closed) without a
// shutdown request first: as for an exit without shutdown, the process should exit with code 1.
var ErrDisconnected = errors.New("lsp: the editor closed the connection without shutdown")

// Serve builds the application (host.New) with this connection as its UI and runs the LSP server
// on rwc until the editor sends exit, rwc's read side ends, or ctx is cancelled. Every way out
// closes every MCP client and kills every stdio server's process group. It returns nil after
// shutdown+exit or a cancelled ctx, ErrNoShutdown after an exit without shutdown, ErrDisconnected
// when the input ended without shutdown, and an error when the editor's input lost its LSP framing for good (the host cannot
// read on, so it stops rather than stay up deaf).
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	base := opts.Logger
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	s := &server{
		opts: opts,
		docs: newDocuments(),
		poke: make(chan struct{}, 1),
		conn: &connection{log: base, gone: make(chan struct{}), open: make(chan struct{})},
		life: lifecycle{exited: make(chan struct{})},
	}
	s.conn.baseCtx, s.conn.cancel = context.WithCancel(context.Background())
	s.log = slog.New(&logHandler{next: base.Handler(), s: s})
	s.cmds = s.commands()
	appOpts := opts.Options
	appOpts.Logger = s.log
	app, err := host.New(appOpts, s)
	if err != nil {
		s.conn.cancel()
		return err
	}
	s.app = app
	return s.run(ctx, rwc)
}

func (s *server) run(ctx context.Context, rwc io.ReadWriteCloser) error {
	stream := lspconn.NewStream(rwc, lspconn.StreamOptions{Logger: s.log, Tap: s.opts.Tap,
		// Calls whose server answered in the same read reply together, in one write.
		Busy: func() bool { return stdio.AnswersInHand() > 0 }})
	router := s.routes()
	conn := jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspconn.Codec{}), jsonrpc2.WithPreempter(router))
	s.conn.conn = conn
	conn.Go(s.conn.baseCtx, router.Handle)

	var exitErr error
	select {
	case <-stream.Done(): // the editor closed our stdin (or the pipe broke, or the framing was lost)
		s.record("lifecycle", map[string]any{"event": "disconnect"})
		if err := stream.Err(); err != nil {
			exitErr = fmt.Errorf("host: %w", err) // unable to read on: exit non-zero, never stay deaf
		} else if !s.wasShutdown() {
			exitErr = ErrDisconnected
		}
	case <-s.life.exited:
		if !s.wasShutdown() {
			exitErr = ErrNoShutdown
		}
	case <-ctx.Done():
	}
	// Nothing written from here on waits for the editor: it is gone, said exit, or the process
	// is being ended; a write waiting for an editor that stopped reading held the close below.
	stream.Leave()
	s.teardown()

	// Close waits for in-flight handlers; they all end once baseCtx is cancelled, but never let a
	// stuck one keep the process alive.
	closed := make(chan struct{})
	go func() {
		conn.Close() // ignore error: the editor is gone or told us to exit
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		s.log.Error("lsp: connection did not close in time; exiting anyway")
		rwc.Close() // ignore error
	}
	s.app.CloseEvents()
	return exitErr
}

// teardown ends everything the server started; safe to call more than once.
func (s *server) teardown() {
	s.life.downOnce.Do(func() {
		close(s.conn.gone)
		s.app.Close()
		s.conn.cancel()
	})
}
