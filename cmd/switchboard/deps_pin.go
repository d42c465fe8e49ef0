package main

import (
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/gofrs/flock"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/renameio/v2/maybe"
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/mark3labs/mcp-go/server"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "go.lsp.dev/uri"
)

func main() {}
