package main

import (
	"context"
	"io"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// serveLSP runs the language server (host/lsp), which builds the application (host.New) with the
// editor connection as its UI.
func serveLSP(ctx context.Context, rwc io.ReadWriteCloser, opts host.Options) error {
	return lsp.Serve(ctx, rwc, lsp.Options{Options: opts, Version: version})
}

// warmCodecs builds the JSON codecs an editor's initialize and the first servers' start use, in
// the order they need them (lsp.WarmCodecs, mcpbridge.WarmCodecs). serve runs it on a goroutine of
// its own as it starts: on a second core it is done before the editor's initialize is read.
func warmCodecs() {
	lsp.WarmCodecs()
	mcpbridge.WarmCodecs()
}

// errNoShutdown is serveLSP's error for an exit without shutdown: exit code 1.
var errNoShutdown = lsp.ErrNoShutdown

// errDisconnected is serveLSP's error when stdin ended without shutdown: exit code 1.
var errDisconnected = lsp.ErrDisconnected
