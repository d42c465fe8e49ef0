// Package stdio is the transport of stdio MCP servers: it starts the child with an explicit
// environment ([DefaultBaseEnv] plus the server's env, never the host's API keys; [ChildEnv]) in
// its own process group, marks it and its descendants so that they can be found again
// ([SweepOrphans] ends what a crashed host left), watches the process so that its death ends the
// connection at once, and reads its stdout as bounded newline-delimited frames
// ([FrameReader]: a line over the limit fails the connection; a JSON string longer than
// [ElideAt] keeps only its first bytes and its decoded length). [Transport] implements mcp-go's
// transport interface and adds [Transport.RoundTripLine], which keeps the response's [Frame]
// for the registry's lean tools/call path.
//
// It speaks MCP through mcp-go (its transport interface and JSON-RPC types), and knows nothing of
// the registry above it: it must not import mcpbridge, mcpbridge/config, mcpbridge/oauth or
// mcpbridge/tokenstore, nor host, session, permissions or go.lsp.dev (deps_test.go). What it
// needs of the registry's limits (the result cap behind ElideAt) mcpbridge checks at compile
// time (cap.go).
package stdio
