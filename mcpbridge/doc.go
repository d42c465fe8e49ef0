// Package mcpbridge connects to every configured MCP server and turns their tools into one
// registry: connections (Registry), tool naming, the result cap; configuration is mcpbridge/config.
// It imports mcp-go and nothing of host, session or go.lsp.dev (deps_test.go).
//
// # Rooms
//
// The vocabularies around the registry have their own packages, and every arrow runs down:
// mcpbridge → oauth → config → tokenstore, and mcpbridge → stdio.
//   - config: the configuration files (JSON/JSONC, Codex TOML imports), ${VAR} variables,
//     "inputs", "envFile", `mcp add`/`mcp remove` edits, the trust sentences; [config.LoadConfig]
//     gives the [config.ServerConfig] list the registry runs.
//   - oauth: signing in to an http or sse server (discovery, registration, the browser flow, the
//     bearer that refreshes tokens); [Registry.SignIn] and [Registry.SignOut] drive it.
//   - stdio: the stdio transport (frames, process group ownership, the child's environment).
//   - tokenstore: where sign-ins and input values are kept.
//
// # Naming
//
// A tool is registered as mcp__<server>__<tool> ([ToolName]). Server names (at most 32
// characters) cannot contain "__" nor end in '_', and no registered tool part starts with '_', so
// the first "__" after the prefix is the only possible separator: [ParseToolName] gives every
// registered name exactly one server. A name over 64 characters, with characters outside
// [A-Za-z0-9_-], or whose tool is empty or starts with '_', is made safe: every other character
// becomes '_', a leading '_' of the tool becomes '-', the name is cut to 55 characters (never into
// the server part), and "_" plus the first 8 hex digits of sha256(server NUL tool) is appended
// ("mcp__fs__read_file_1a2b3c4d"). The registry keeps the reverse map ([Registry.Lookup]).
//
// Two tools of one server that would share a registered name (for instance "a.b", made safe as
// mcp__x__a_b_<hash>, and a tool called "a_b_<hash>") are both registered under their hashed names, so neither wins
// and the result does not depend on which server connected first. The collision is logged as an
// error and shown as the Error of both servers' status (their state stays ready). A tool listed
// twice by one server is registered once and reported the same way.
//
// # Results
//
// [Registry.Call] returns a [Result]: Text is the text blocks joined with "\n". Each text block,
// and the joined text, is capped at [MaxResultText] (1 MiB): cut at the last UTF-8 boundary at or
// below the cap, followed by "\n\n[mcp output truncated: <total> bytes total, <kept> kept]".
// Error results are capped the same way. Non-text blocks (images, audio, resources) are kept as
// they are; a result above [MaxResultTotal] (10 MiB) after the text cap becomes an error result.
// Failures the bridge produces itself (unknown tool, dead server, timeout, JSON-RPC error) are
// error results with the text {"error":"<message>"}; an unknown tool gives exactly
// {"error":"Unknown tool: <name>"}. Calls are never retried.
//
// # Lifecycle
//
// [Registry.Apply] returns at once: each server connects in its own goroutine, bounded by its
// startup timeout (connect, initialize, tools/list). States are starting, ready, failed (with the
// reason and the tail of a stdio server's stderr), disabled, untrusted (WorkspaceOnly and not
// Options.Trusted) and stopped. OnChange is called, coalesced and never concurrently, after any
// state or tool-list change.
//
// Each server speaks one protocol era (era.go): 2025-11-25 (the initialize handshake) or
// 2026-07-28 (per-request _meta, server/discover, multi round-trip input in mrtr.go). An entry's
// "protocol" fixes it; in auto, a stdio server is sent initialize first (a legacy server never
// waits for a probe) and server/discover only when it answers initialize with an error; an HTTP
// server is sent server/discover first. The era found is remembered per definition
// (Options.Eras) and tried first at the next start.
//
// Stdio servers run under the registry's own transport (mcpbridge/stdio), not mcp-go's: the child gets
// an explicit environment (stdio.DefaultBaseEnv plus the server's env, never the host's API keys), its
// own process group, and a watched process, so a server that dies is failed at once (its tools
// unregistered, a pending call ended with an error result). Each stdout line is bounded
// (64 MiB): an endless line or a larger frame fails the connection instead of the host's memory.
// While a line is read, any JSON string longer than 11 MiB keeps only its first 11 MiB plus its
// decoded length (stdio/frame.go): a text block that long is capped anyway, and anything else that
// long exceeds MaxResultTotal. Responses are decoded in place and text is capped while it is
// decoded, so a 50 MB text result costs about 11 MiB of host memory, not several copies of it.
//
// notifications/tools/list_changed only signals a per-server goroutine (the notification arrives
// on the transport's read goroutine, where calling the server would deadlock); after 100 ms of
// quiet it re-lists that one server and re-registers its tools. A storm costs at most one re-list
// per 100 ms.
//
// [Registry.Close] closes every connection in parallel; a stdio child gets its stdin closed, then
// SIGTERM and SIGKILL for its whole process group (npx/uvx children too), and Close returns when
// the group is gone.
package mcpbridge
