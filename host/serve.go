package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
)

// Options configures Serve. The zero value serves with the XDG default paths and the process
// environment.
type Options struct {
	// Logger receives the host's log (nil = discard). Warnings and errors are also sent to the
	// editor as window/logMessage.
	Logger *slog.Logger
	// Version is reported in serverInfo.
	Version string
	// Env reads the environment (SWITCHBOARD_EVENTS, provider API keys); nil = os.Getenv.
	Env func(string) string
	// LookupEnv expands ${VAR} in MCP configuration; nil = derived from Env, or os.LookupEnv.
	LookupEnv func(string) (string, bool)

	// Paths; "" = the defaults of PROTOCOL.md (permissions.Default*Path, the user mcp.json, the
	// user config.json with the provider).
	UserConfigFile     string
	ProviderConfigFile string
	AllowlistPath      string
	TrustPath          string
	AuditPath          string
	// NoAudit turns the audit log off.
	NoAudit bool
	// BaseEnv is the environment base for stdio MCP servers (nil = mcpbridge's minimal default).
	BaseEnv []string
	// Tap, when set, sees every LSP frame body read or written (tests print it on failure).
	Tap func(dir string, body []byte)
	// Now is the clock for Approval.requestedAt (nil = time.Now).
	Now func() time.Time
}

// ErrNoShutdown is returned by Serve when the editor sent exit without shutdown first: the
// process should exit with code 1 (LSP "exit" notification).
var ErrNoShutdown = errors.New("host: exit without shutdown")

// Serve runs the LSP server on rwc until the editor sends exit, rwc's read side ends, or ctx is
// cancelled. Every way out closes every MCP client and kills every stdio server's process group.
// It returns nil after shutdown+exit and on a lost connection or cancelled ctx, ErrNoShutdown after
// an exit without shutdown, and an error when the editor's input lost its LSP framing for good
// (the host cannot read on, so it stops rather than stay up deaf).
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	s, err := newServer(opts)
	if err != nil {
		return err
	}
	return s.run(ctx, rwc)
}

func (s *server) run(ctx context.Context, rwc io.ReadWriteCloser) error {
	stream := lspconn.NewStream(rwc, lspconn.StreamOptions{Logger: s.log, Tap: s.opts.Tap})
	router := s.routes()
	conn := jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspconn.Codec{}), jsonrpc2.WithPreempter(router))
	s.conn = conn
	conn.Go(s.baseCtx, router.Handle)

	var exitErr error
	select {
	case <-stream.Done(): // the editor closed our stdin (or the pipe broke, or the framing was lost)
		s.events.record("lifecycle", map[string]any{"event": "disconnect"})
		if err := stream.Err(); err != nil {
			exitErr = fmt.Errorf("host: %w", err) // unable to read on: exit non-zero, never stay deaf
		}
	case <-s.exited:
		if !s.wasShutdown() {
			exitErr = ErrNoShutdown
		}
	case <-ctx.Done():
	}
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
		s.log.Error("host: connection did not close in time; exiting anyway")
		rwc.Close() // ignore error
	}
	s.events.close()
	return exitErr
}

// teardown ends everything the server started; safe to call more than once.
func (s *server) teardown() {
	s.teardownOnce.Do(func() {
		close(s.gone)
		s.shutdownBackends(ResolvedByDisconnect)
		s.cancel()
	})
}

func wrapEnv(opts Options) (func(string) string, func(string) (string, bool)) {
	env, lookup := opts.Env, opts.LookupEnv
	switch {
	case env == nil && lookup == nil:
		return os.Getenv, os.LookupEnv
	case lookup == nil:
		lookup = func(k string) (string, bool) {
			v := env(k)
			return v, v != ""
		}
	case env == nil:
		env = func(k string) string {
			v, _ := lookup(k)
			return v
		}
	}
	return env, lookup
}
