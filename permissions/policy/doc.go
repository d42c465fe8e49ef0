// Package policy is the organisation's policy over MCP: which servers may start, which tools are
// refused or always asked about, which modes are off (design section 6 of
// shared-servers-and-policy.md, issue 33). It is a leaf: it reads and matches, and host applies
// it (server admission, the gate's policy step, check and `policy explain`).
//
// # Sources
//
// Read in this order and merged (Paths, DefaultPaths):
//
//   - Switchboard's own: <Dir>/managed-settings.json, <Dir>/managed-settings.d/*.json (in name
//     order; hidden files and other names skipped) and <Dir>/managed-mcp.json, where Dir is
//     /etc/switchboard on Linux, /Library/Application Support/Switchboard on macOS and
//     Program Files\Switchboard on Windows (the known folder, never the user's %ProgramFiles%).
//   - macOS managed preferences (Paths.ManagedPrefs, /Library/Managed Preferences): domain
//     dev.switchboard, key Settings (the settings as a JSON string), binary or XML plists; and
//     the Windows registry (Paths.Registry): HKLM\SOFTWARE\Policies\Switchboard, value Settings.
//   - Restrict-only imports, unless a Switchboard file says "inheritPolicies": false: Claude
//     Code's files of the same names (/etc/claude-code, /Library/Application Support/ClaudeCode,
//     %ProgramFiles%\ClaudeCode), GitHub Copilot managed-settings.json files given in
//     Paths.Copilot, VS Code's /etc/vscode/policy.json, and the same products' managed
//     preferences (com.anthropic.claudecode, com.microsoft.VSCode) and registry keys
//     (...\Policies\ClaudeCode, ...\Policies\Microsoft\VSCode). From them only MCP keys are taken,
//     and never a grant: permissions.allow is not imported; an imported allowedMcpServers is one
//     more allowlist a server must pass; an imported managed-mcp.json is one more exclusive set a
//     managed server must be in.
//
// A file counts only if nobody but root could have written it: the file (a regular file) and
// every directory above it, on the path as named and on the path its symlinks lead to, must be
// owned by root and not writable by group or others (a root-owned sticky directory such as /tmp
// is accepted). A missing file is no source. A file that exists but cannot be read, parsed or
// trusted, or holds one wrong value, makes the Policy broken: it then blocks every MCP server and
// refuses every MCP call (built-in tools still run, so the editor can explain). Errors say
// file:line:column; every rule is addressable as file#/json/pointer (Rule.Loc).
//
// # Format
//
// JSONC with the keys and meanings of Claude Code's and Copilot's managed-settings.json:
// allowedMcpServers / deniedMcpServers (entries {serverName}, {serverCommand: [argv]},
// {serverUrl: "https://host/*"}), allowManagedMcpServersOnly, permissions.allow / ask / deny
// (mcp__server, mcp__server__*, mcp__server__prefix*, mcp__server__tool, a built-in tool name,
// and mcp__* in deny and ask only), permissions.disableBypassPermissionsMode "disable",
// allowManagedPermissionRulesOnly; and
// Switchboard's own disabledModes, pinning, workspaceServers, sampling, sharedServers,
// mcpAccess, mcpRegistryUrl, mcpSandbox ("required" | "optional"), adminContact {email, url}
// and inheritPolicies. Unknown keys are warnings; a known key with a wrong value is an error.
// managed-mcp.json is {"mcpServers": {...}}; an empty map
// turns MCP off. VS Code's ChatMCP maps to mcpAccess, ChatToolsAutoApprove false disables
// always-allow, ChatToolsEligibleForAutoApproval {tool: false} asks for MCP tool names, and
// AdminContactEmail / AdminContactUrl give the contact.
//
// # Precedence and matching
//
// Most restrictive wins across every source. Server admission (Policy.Admit) checks, in order:
// the deny lists; mcpAccess none; managed-mcp.json (only its servers, started by the host with
// Launch.Managed set); allowManagedMcpServersOnly without an allowlist; mcpAccess registry (only
// a server the host found to be exactly what the organisation's registry gives for the name and
// version its entry records, Launch.Registry; the registry is mcpRegistryUrl, else VS Code's
// McpGalleryServiceUrl, else the official one); every allowlist; workspaceServers deny;
// mcpSandbox required (a stdio server whose entry has no sandbox, Launch.Sandboxed false, is
// blocked, never confined by a profile the person did not see; HTTP servers are untouched).
// Matching is on the resolved launch (Launch), never on the template, so ${env:X} cannot
// dodge a rule. serverCommand compares the argument list exactly, as Claude Code does; its
// command matches the program that runs: an allow rule's bare command is looked up on the
// host's PATH and must be the same file as what runs; a deny rule also matches any program of
// that name and the command as written. serverUrl takes "*" wildcards after both sides are
// normalised, and a "*" in the host never reaches past it. As in Claude Code, when an allowlist
// has any serverCommand entry a stdio server must match one of those (a name is not enough),
// and likewise serverUrl for HTTP servers. A name-only deny is reported as dodgeable.
//
// Tool rules (Policy.Tool): deny beats ask beats allow. The package does not import
// permissions; the gate asks it through a function host supplies.
package policy
