// Package host is the Switchboard LSP server: what editors start as `switchboard serve`. It speaks
// the LSP base protocol on one connection (stdin/stdout) and wires the MCP registry
// ([mcpbridge.Registry]), the confirm gate ([permissions.Gate]) and the agent
// ([session.Manager]) to the editor through standard LSP (PROTOCOL.md in the shared notes is the
// wire contract; methods.go mirrors its names).
//
// # Data flow
//
//	editor ──stdin──▶ lspconn.Stream ──▶ jsonrpc2.Conn ──▶ lspconn.Router
//	                  (bad frame → -32700,   (read loop)      ├─ notifications: inline, wire order
//	                   keep reading)                          │    didOpen/didChange/didClose → documents (open buffers)
//	                                                          │    didChangeConfiguration → settings, Registry.Apply
//	                                                          │    $/cancelRequest (Preempter) → request ctx cancelled
//	                                                          └─ requests
//	                                                               initialize (inline; servers start after it)
//	                                                               codeAction (inline) → 4 quickfixes per pending approval
//	                                                               executeCommand (async: jsonrpc2.Async)
//	                                                                 switchboard.callTool ─▶ session.Manager.CallTool
//	                                                                 switchboard.chat ─▶ session.Manager.Start ─▶ turn goroutine
//	                                                                                      │
//	          ┌───────────────────────────────────────────────────────────────────────────┘
//	          ▼
//	permissions.Gate.Check ── allowlist/mode decide ──▶ allowed / denied
//	          │ ask
//	          ▼
//	approvals.Confirm (confirm.go) ──▶ switchboard/approvalRequested ─┐
//	          │                        window/showMessageRequest ──────┼──▶ editor
//	          │                        codeAction quickfixes ──────────┘
//	          ◀── first of: message reply │ switchboard.approve (code action) │ timeout │ cancel │ editor gone
//	          └──▶ switchboard/approvalResolved
//	allowed: mcpbridge.Registry.Call ──▶ MCP server (stdio / http / sse)
//	result ──▶ ToolResult reply (callTool) or switchboard/event (chat)
//
//	mcpbridge.Registry OnChange ──▶ switchboard/serversChanged, $/progress, window/showMessage on failure,
//	                                workspace trust prompt (untrusted workspace-only servers)
//	slog warnings and errors ──▶ window/logMessage (and stderr/--log at the configured level)
//	everything notable ──▶ SWITCHBOARD_EVENTS file (events.go)
//
// # Concurrency
//
// Notifications run inline on the read loop, so buffers are always applied in wire order and a
// request sees every notification sent before it. Requests that wait (executeCommand, shutdown) are
// released with jsonrpc2.Async so a callTool waiting at the gate never blocks approve, cancel or
// codeAction. Nothing calls the editor (Conn.Call) from the read loop: prompts, progress creation
// and applyEdit run on their own goroutines. Handlers never see jsonrpc2's pooled per-request
// context (see lspconn.Router).
//
// # Lifecycle
//
// initialize answers at once; MCP servers start on initialized (or on the first message after
// initialize). shutdown denies pending approvals, ends turns and closes every MCP server (process
// groups killed); exit ends Serve (nil after shutdown, ErrNoShutdown otherwise). A closed stdin or
// a cancelled context does the same cleanup.
package host
