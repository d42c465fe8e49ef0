// Package permissions is Switchboard's confirm gate and the files behind it: the tool allowlist,
// the workspace trust store and the audit log. It is a leaf: it knows nothing of LSP or MCP; the
// host supplies a Prompter that asks the user.
//
// # Modes
//
// Each Request carries a Mode (PROTOCOL.md section 4):
//
//   - single-confirm (the default): allowlisted tools run, the user is asked about the rest.
//   - always-allow: every tool runs.
//   - allowlist-only: allowlisted tools run, the rest are denied without asking.
//
// There is no per-server read-only toggle, and MCP tool annotations (readOnlyHint ...) never grant
// anything.
//
// # Decision order
//
// Gate.Check decides in this order; the first rule that applies wins, and the Decision says which
// (Decision.By, plus Entry and File for an allowlist match):
//
//  1. The caller's ctx is already cancelled: deny (By "cancelled").
//     Then the organisation's policy (GateOptions.Policy, a PolicyVerdict the host builds from
//     permissions/policy): a deny refuses the call in every mode (By "policy", Entry the rule as
//     file#/json/pointer); a disabled mode is decided as its fallback (single-confirm), with a
//     note; then the pins (GateOptions.Pins) may hold the call (By "pin"); then a policy ask
//     asks the user whatever the mode and the allowlist say (in allowlist-only: deny, By
//     "policy"), and a managed allow runs the call (By "policy"). With NoUserGrants
//     (allowManagedPermissionRulesOnly) no allowlist entry counts and an "always" or "server"
//     answer is taken once and not saved.
//  2. Mode always-allow: allow (By "mode"). An unknown mode: deny (By "error") and an error.
//  3. The allowlist matches the tool name (an exact entry, else the longest "prefix*" entry of
//     the tool's own server, compared after parsing mcp__<server>__<tool>, never as a raw string
//     prefix): allow (By "allowlist", Entry, File; Reason says what the entry covers). A
//     malformed allowlist file matches nothing; an MCP tool name that is not a name of
//     Request.Server matches nothing. For a workspace-defined server (Request.Definition set)
//     an entry counts only if the trust store records it as granted for that definition;
//     otherwise it is ignored and Reason says so (a changed or another definition of the same
//     server name inherits nothing).
//  4. A read-only built-in tool (Request.ReadOnlyBuiltin, no server): allow (By "builtin"), in
//     single-confirm and in allowlist-only alike. These tools only read the workspace the
//     editor already shares with the server, the rule is Switchboard's own (never an MCP
//     annotation), and an agent that cannot read is useless in allowlist-only. To deny them,
//     don't mark them; to audit them, see the audit log.
//  5. Mode allowlist-only: deny (By "mode").
//  6. single-confirm asks the Prompter, with a ctx that ends after the approval timeout (default
//     120 s). No prompter: deny (By "error"). The caller's ctx cancelled: deny (By "cancelled").
//     Timeout (even if an answer arrives late): deny (By "timeout"). A prompter error: deny
//     (By "error"). Otherwise the user's answer (By "user"): deny; once; always (adds the tool
//     name); server (adds "mcp__<server>__*", which collapses that server's entries; for a built-in
//     tool with no server it is the same as always). The entry is written before Check returns;
//     for a workspace-defined server it is also recorded in the trust store for its definition
//     (both are needed: removing the entry from the allowlist revokes the grant).
//     If writing fails the call is still allowed this once (the user said yes), the error is
//     logged and put in Decision.Reason.
//
// Every decision is appended to the audit log, if there is one. The append is off the call's
// path: Check only queues the entry for the log's background writer and never waits for the
// file; if the writer falls behind, the entry is dropped and counted (AuditLog.Dropped).
//
// # Allowlist file
//
// $XDG_CONFIG_HOME/switchboard/allow_tool (default ~/.config/switchboard/allow_tool). One entry per
// line; lines starting with "#" are comments; blank lines are allowed; white space around a line
// is ignored. An entry is parsed once into one of: a built-in tool name ("write_file"); an MCP tool
// name mcp__<server>__<tool> ("mcp__github__create_issue"); mcp__<server>__* (every tool of one
// server); mcp__<server>__<tool prefix>* (the tools of one server whose names start with the
// prefix). Names use only A-Z a-z 0-9 _ and -; a server name is at most 32 characters, has no "__"
// and does not end in '_', and a tool part does not start with '_', so an entry names exactly one
// server. A "*" that does not stay within one server ("mcp__gith*", "mcp__*", "edit_*") and a
// bare "*" are rejected. Any other line makes the file malformed: the error
// names file:line, the file then grants nothing (fail closed) and is never overwritten, until it is
// fixed (the watcher reloads it).
//
//	# granted from the editor
//	mcp__github__*
//	mcp__sqlite__read_query
//	write_file
//
// Replace(prefix, entries) follows PROTOCOL.md section 3: prefix is mcp__<server>__; it removes
// every entry of that server (by parsed server) and adds entries (each must be an entry of that
// server; "prefix*" collapses the rest; an empty list revokes). Comments, blank lines and other
// entries keep their order; the new entries take the place of the first removed one, or go at the
// end. Entries of other servers stay, even when their names start with the same characters.
//
// Writes are atomic (renameio: temp file in the same folder, fsync, rename; a plain write on
// Windows), keep the file's mode exactly (0600 for a new file), and are serialised across processes
// by a flock on a separate "<file>.lock"; the file is re-read under the lock before it is changed,
// so concurrent writers never lose each other's updates. A writer killed mid-write leaves at most
// a temp file ".allow_tool<digits>", which the next write removes. Allowlist.Watch watches the parent folder with fsnotify, so
// changes by other processes (other editor windows, `switchboard allow set`) are picked up.
//
// # Trust store and audit log
//
// trust.json remembers, per server-config fingerprint, whether the user trusted a workspace server
// and which allowlist entries the user granted to that definition (see TrustStore). audit.jsonl ($XDG_STATE_HOME/switchboard, default ~/.local/state/switchboard)
// gets one JSON line per decision with the SHA-256 of the arguments, never the arguments
// themselves, and rotates to audit.jsonl.1 at 10 MiB (see AuditLog). A background writer appends
// the lines in batches under the log's flock; Flush waits for it and Close drains it.
package permissions
