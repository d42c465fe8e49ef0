// Package lsp is the Switchboard language server: the LSP front end of the application
// ([host.App]). It speaks the LSP base protocol on one connection (stdin/stdout), decodes every
// request into the contract's types (host/wire), calls the application and encodes its answer
// (convert.go is the edge), and implements [host.UI] over LSP (ui.go): questions as
// window/showMessageRequest, switchboard/approvalRequested and quickfix code actions, elicitation
// forms, work-done progress, window/showDocument, workspace/applyEdit for edit_file, notices.
//
// # Data flow
//
//	editor ──stdin──▶ lspconn.Stream ──▶ jsonrpc2.Conn ──▶ lspconn.Router
//	                  (bad frame → -32700,   (read loop)      ├─ notifications: inline, wire order
//	                   keep reading)                          │    didOpen/didChange/didClose → documents (open buffers)
//	                                                          │    didChangeConfiguration → App.ApplySettings, App.Reapply
//	                                                          │    $/cancelRequest (Preempter) → request ctx cancelled
//	                                                          └─ requests
//	                                                               initialize (inline; App.Start after it)
//	                                                               codeAction (inline) → 4 quickfixes per pending approval
//	                                                               executeCommand (async: jsonrpc2.Async)
//	                                                                 wire params ─▶ App operation ─▶ wire result
//
//	App (host) ──UI──▶ server (ui.go): Ask → showMessageRequest / approvalRequested / elicitationRequested
//	                                   Resolved → approvalResolved / elicitationResolved
//	                                   ServersChanged → switchboard/serversChanged; Notify → showMessage
//	                                   ChatEvent → switchboard/event; ToolProgress → $/progress
//	                                   ResourcesChanged (host.ResourceUI, resources.go) → switchboard/resourcesChanged
//	slog warnings and errors ──▶ window/logMessage (and stderr/--log at the configured level)
//
// # Concurrency
//
// Notifications run inline on the read loop, so buffers are always applied in wire order and a
// request sees every notification sent before it. Requests that wait (executeCommand, shutdown) are
// released with jsonrpc2.Async so a callTool waiting at the gate never blocks approve, cancel or
// codeAction. Nothing calls the editor from the read loop: prompts, progress creation and applyEdit
// run on their own goroutines. Handlers never see jsonrpc2's pooled per-request context (see
// lspconn.Router).
//
// # Lifecycle
//
// initialize answers at once; the application starts on initialized (or on the first message
// after initialize). shutdown ends the application (pending questions denied, turns ended, MCP
// servers closed, process groups killed); exit ends Serve (nil after shutdown, ErrNoShutdown
// otherwise). A closed stdin or a cancelled context does the same cleanup.
//
// # Imports
//
// Only this package and host/internal/lspconn import go.lsp.dev (the test clients speak LSP
// through host/lsptest). It imports the application (host) and the contract (host/wire); nothing
// but cmd/switchboard and host/hosttest imports it, and it never imports mcp-go: deps_test.go
// guards all of it.
package lsp
