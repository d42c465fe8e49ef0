// Package host is the Switchboard application: one [App], built by cmd with [New] from [Options]
// and a [UI]. It owns the allowlist, trust store and audit log ([permissions]), the confirm gate,
// the MCP registry ([mcpbridge.Registry]), the agent ([session.Manager]), the settings and the
// configuration and trust policy, and every pending question to the person. It offers the
// operations both front ends need: servers, tools, call a tool, chat, cancel, reconnect, trust,
// allowlist, answer a pending question, apply settings.
//
// # Front ends
//
// The language server (host/lsp, what editors start as `switchboard serve`) and `switchboard call`
// (the terminal) each implement [UI], the only way the application asks or tells the person:
// questions ([Question]: a tool call's approval, a server's elicitation, sampling consent, trust),
// notices, server statuses, tool-call progress, and the open buffers and edits of edit_file.
//
// # A tool call
//
// One way down and back: front end ─▶ [App.CallTool] ─▶ session.Manager.CallTool ─▶
// permissions.Gate.Check ─▶ [App.Confirm] (the gate's Prompter) ─▶ [UI.Ask] ─▶ the person; their
// answer comes back through [App.Answer] or [Question.Answer] from any front end, and the
// [Question] orders it against its deadline under its own lock; then mcpbridge.Registry.Call,
// with the call's [ToolProgress] observer given explicitly in [CallRequest] and passed on to
// session.Manager.CallToolVia (or made by [UI.ToolProgress] for a chat turn's calls). A chat
// turn's steps reach the front end through [UI.ChatEvent]. No ctx value and no front end's
// closure travels down: oneway_test.go guards the first.
//
// # Questions
//
// Every kind of question lives in one queue ([Questions]): ids "a1", "e2", "s3", "t4" (the
// letter of its kind), oldest first, answered once; it ends by the person's answer, its timeout,
// the asker giving up, or the front end going away (cancel all), whichever comes first.
//
// # Imports
//
// host imports the leaves (mcpbridge, permissions) and session. It must not import go.lsp.dev,
// host/lsp, host/internal/lspconn or host/wire (the contract is converted at the language
// server's edge), nor cmd: deps_test.go guards it.
package host
