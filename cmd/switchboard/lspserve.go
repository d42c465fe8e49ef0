package main

import (
	"context"
	"io"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/lsp"
)

// serveLSP runs the language server (host/lsp), which builds the application (host.New) with the
// editor connection as its UI.
func serveLSP(ctx context.Context, rwc io.ReadWriteCloser, opts host.Options) error {
	return lsp.Serve(ctx, rwc, lsp.Options{Options: opts, Version: version})
}

// errNoShutdown is serveLSP's error for an exit without shutdown: exit code 1.
var errNoShutdown = lsp.ErrNoShutdown

// errDisconnected is serveLSP's error when stdin ended without shutdown: exit code 1.
var errDisconnected = lsp.ErrDisconnected
